from config import HOST, PORT


def serve():
    print(f"listening on {HOST}:{PORT}")
