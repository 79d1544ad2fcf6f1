#!/usr/bin/env python3
"""A TCP relay for tests: listens on HOST:PORT for each --listen given and
copies every connection's bytes both ways to --to HOST:PORT.

Machines in network namespaces of their own reach a server that listens on
127.0.0.1 only (the Ceph fixture's gateway) through the relay, which runs in
the namespace the server is in and listens on each veth address. Prints
"ready" once every address listens.
"""
import argparse
import asyncio
import sys


def host_port(text):
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


async def pipe(reader, writer):
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except (ConnectionError, OSError):
            pass


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--listen", type=host_port, action="append", required=True)
    parser.add_argument("--to", type=host_port, required=True)
    args = parser.parse_args()

    async def relay(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(*args.to)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))

    servers = [await asyncio.start_server(relay, host, port) for host, port in args.listen]
    print("ready", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
