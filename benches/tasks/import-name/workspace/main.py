from config import load_config

config = load_config()
print(f"debug={config['debug']}")
