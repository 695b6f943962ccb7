import configparser
import logging


def load(path="app.ini"):
    cfg = configparser.ConfigParser()
    cfg.read(path)
    return cfg


def log_level(cfg, service):
    """logging level number for a service section."""
    return getattr(logging, cfg[service]["log_level"].upper())
