import logging
import sys

from profiles import PROFILES


def start(profile_name):
    profile = PROFILES[profile_name]
    logging.basicConfig(level=profile["verbosity"])
    logging.getLogger("app").info("started with %s", profile_name)


if __name__ == "__main__":
    start(sys.argv[1] if len(sys.argv) > 1 else "development")
