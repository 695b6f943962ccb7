package config

import (
	"bufio"
	"io"
	"strings"
)

// parseConfig reads "key = value" lines. Blank lines and lines
// starting with '#' are comments and are skipped.
func parseConfig(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || !strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		out[strings.TrimSpace(key)] = strings.TrimSpace(value)
	}
	return out, sc.Err()
}
