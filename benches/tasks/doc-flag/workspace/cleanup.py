import argparse
import pathlib

LEFTOVERS = ("*.pyc", "*.o", "*.tmp", "*.log")


def main():
    parser = argparse.ArgumentParser(description="Delete build leftovers.")
    parser.add_argument("folder")
    parser.add_argument("--verbose", action="store_true", help="print every file as it is deleted")
    parser.add_argument("--keep-logs", action="store_true", help="leave *.log files in place")
    parser.add_argument("--dry-run", action="store_true", help="list what would be deleted, delete nothing")
    args = parser.parse_args()
    for pattern in LEFTOVERS:
        if args.keep_logs and pattern == "*.log":
            continue
        for path in pathlib.Path(args.folder).rglob(pattern):
            if args.verbose or args.dry_run:
                print(path)
            if not args.dry_run:
                path.unlink()


if __name__ == "__main__":
    main()
