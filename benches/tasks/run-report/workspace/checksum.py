"""Prints a checksum of a CSV file's rows, to compare exports between systems."""
import hashlib
import sys


def checksum(path):
    digest = hashlib.sha256()
    with open(path, encoding="utf-8") as f:
        for line in f:
            digest.update(line.strip().lower().encode())
    return digest.hexdigest()[:12]


if __name__ == "__main__":
    print(checksum(sys.argv[1]))
