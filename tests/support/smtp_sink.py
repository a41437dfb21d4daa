"""A real SMTP server for the e-mail channel tests: aiosmtpd, the asyncio SMTP server
(PyPI), on a loopback port it picks.

    smtp_sink.py starttls DIR   STARTTLS required, then AUTH (alerts / s3cret); the
                                certificate names `localhost` and is issued by a CA
                                written to DIR/ca.pem
    smtp_sink.py plain DIR      no TLS, no AUTH (a relay that offers no STARTTLS)

Prints `{"port": N}` once listening, then one JSON line per message received:
{"from", "to", "data", "tls", "user", "attachments": [{"filename", "type", "base64"}]}
(attachments read by Python's own MIME parser). Stops when stdin closes.
"""

import asyncio
import base64
import email
import email.policy
import json
import os
import ssl
import subprocess
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

USER, PASSWORD = b"alerts", b"s3cret"


def certificates(d):
    """A CA and a `localhost` server certificate it signed (webpki refuses a self-signed
    certificate that is its own trust anchor)."""
    def run(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=Boardsmith test CA")
    run("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n"
                "extendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
    return ctx


class Sink:
    async def handle_DATA(self, server, session, envelope):
        user = None
        if session.authenticated and isinstance(session.auth_data, LoginPassword):
            user = session.auth_data.login.decode()
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        attachments = [{
            "filename": part.get_filename(),
            "type": part.get_content_type(),
            "base64": base64.b64encode(part.get_payload(decode=True)).decode(),
        } for part in parsed.iter_attachments()]
        print(json.dumps({
            "attachments": attachments,
            "from": envelope.mail_from,
            "to": envelope.rcpt_tos,
            "data": envelope.content.decode("utf-8", "replace"),
            "tls": session.ssl is not None,
            "user": user,
        }), flush=True)
        return "250 OK"


def authenticate(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (USER, PASSWORD)
    # `handled=False`: aiosmtpd answers the 535 itself.
    return AuthResult(success=ok, handled=False, auth_data=auth_data)


async def main():
    mode, d = sys.argv[1], sys.argv[2]
    if mode == "starttls":
        ctx = certificates(d)

        def factory():
            return SMTP(Sink(), hostname="localhost", tls_context=ctx, require_starttls=True,
                        authenticator=authenticate, auth_required=True, auth_require_tls=True)
    else:
        def factory():
            return SMTP(Sink(), hostname="localhost")
    loop = asyncio.get_running_loop()
    server = await loop.create_server(factory, "127.0.0.1", 0)
    print(json.dumps({"port": server.sockets[0].getsockname()[1]}), flush=True)
    # Until the test closes stdin (or dies).
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


asyncio.run(main())
