"""An MCP server for tack's tests, written with the official Python SDK
(FastMCP), served over stdio."""
import base64, os, sys, time

from mcp.server.fastmcp import FastMCP, Image

server = FastMCP("testing")

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


@server.tool()
def echo(text: str) -> str:
    """Repeat the text."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def pixel() -> Image:
    """A one-pixel image."""
    return Image(data=PNG, format="png")


@server.tool()
def slow(seconds: float) -> str:
    """Sleep, after writing this server's process id to server.pid."""
    with open(os.path.join(os.environ["TACK_TEST_WORKSPACE"], "server.pid"), "w") as f:
        f.write(str(os.getpid()))
    time.sleep(seconds)
    return "slept"


if __name__ == "__main__":
    server.run("stdio")
