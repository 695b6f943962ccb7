from settings import setting

ADMIN_PORT_OFFSET = 1


def listen_address():
    return setting("host"), setting("port")


def admin_address():
    host, port = listen_address()
    return host, port + ADMIN_PORT_OFFSET


if __name__ == "__main__":
    print("listening on %s:%d" % listen_address())
