#!/usr/bin/env bash
# Print the number of lines in each file given, then a total.
set -eu

if [ "$#" -eq 0 ]; then
  echo "usage: $0 FILE..." >&2
  exit 1
fi

total=0
for f in "$@"; do
  n=$(wc -l < $f)
  n=$((n + 0))
  echo "$f: $n"
  total=$((total + n))
done
echo "total: $total"
