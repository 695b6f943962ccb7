#!/usr/bin/env bash
# Build INDEX.md in a notes directory, listing every note with its title.
#
# Usage: notes-index.sh NOTES_DIR
#
# A note is any *.md file in NOTES_DIR (INDEX.md itself excluded). Its title
# is its first "# " heading, or the file name without ".md" when it has none.
# A directory with no notes gets an index containing just the heading.
set -u

dir=${1:-}
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "usage: notes-index.sh NOTES_DIR" >&2
  exit 1
fi

out="$dir/INDEX.md"
tmp="$out.tmp"
echo "# Index" > "$tmp"
count=0
for f in $(ls "$dir"/*.md 2>/dev/null); do
  name=$(basename $f)
  [ "$name" = "INDEX.md" ] && continue
  title=$(grep -m1 '^# ' $f | sed 's/^# //')
  if [ -z "$title" ]; then
    title=${name%.md}
  fi
  echo "- [$title]($name)" >> "$tmp"
  count=$((count + 1))
done
mv "$tmp" "$out"
echo "indexed $count notes"
