from version import Version


def needs_update(installed, latest):
    return not Version(installed) == Version(latest) and Version(installed) < Version(latest)


if __name__ == "__main__":
    print(needs_update("1.2.0", "1.3.0"))
