import levels

PROFILES = {
    "development": {"verbosity": levels.LOUD, "reload": True},
    "staging": {"verbosity": levels.NORMAL, "reload": False},
    "production": {"verbosity": levels.QUIET, "reload": False},
    "batch": {"verbosity": levels.SILENT, "reload": False},
}
