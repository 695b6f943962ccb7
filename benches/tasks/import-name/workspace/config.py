def read_config():
    return {"debug": True, "name": "demo"}
