import sys

from app.db import fetch_user

if __name__ == "__main__":
    print(fetch_user(int(sys.argv[1])))
