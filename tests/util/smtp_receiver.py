"""An SMTP server for the e-mail tests (tests/util/smtp.rs), built on
aiosmtpd (the SMTP server library of the Python world), so what resetctl
sends is taken the way a real mail server takes it: TLS from the first
byte (--implicit) or after STARTTLS (required before AUTH and MAIL), AUTH
PLAIN/LOGIN against one user and password, then each message parsed by
Python's own e-mail package.

Writes its port to PORT_FILE once it listens, and one JSON line per
accepted message to LOG:
  {"auth": USER, "from": ..., "to": [...], "subject": ..., "messageId": ...,
   "contentLanguage": ..., "date": ..., "plain": ..., "html": ..., "raw": ...}

Usage: smtp_receiver.py PORT_FILE LOG CERT KEY USER PASSWORD [--implicit | --no-tls]

--no-tls offers no STARTTLS at all (a server a client must refuse to send
a password and a message to in plain text).
"""
import asyncio, email, email.policy, json, os, socket, ssl, sys, warnings

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def main():
    port_file, log, cert, key, user, password = sys.argv[1:7]
    implicit = "--implicit" in sys.argv[7:]
    no_tls = "--no-tls" in sys.argv[7:]
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user and auth_data.password.decode() == password
        return AuthResult(success=ok, handled=False, auth_data=auth_data.login.decode() if ok else None)

    class Handler:
        async def handle_DATA(self, server, session, envelope):
            message = email.message_from_bytes(envelope.content, policy=email.policy.default)
            plain = message.get_body(preferencelist=("plain",))
            html = message.get_body(preferencelist=("html",))
            record = {
                "auth": session.auth_data if session.authenticated else None,
                # TLS from the first byte, or after STARTTLS.
                "tls": implicit or session.ssl is not None,
                "from": envelope.mail_from,
                "to": envelope.rcpt_tos,
                "subject": str(message["subject"]),
                "messageId": str(message["message-id"]),
                "contentLanguage": message["content-language"],
                "date": str(message["date"]),
                "multipart": message.get_content_type(),
                "plain": plain.get_content() if plain else None,
                "html": html.get_content() if html else None,
                "raw": envelope.content.decode("utf-8", "replace"),
            }
            with open(log, "a") as f:
                f.write(json.dumps(record) + "\n")
            return "250 OK"

    def free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    # A free port, tried again when another process takes it first.
    warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")
    for attempt in range(20):
        port = free_port()
        kwargs = dict(
            hostname="127.0.0.1",
            port=port,
            authenticator=authenticator,
            # With TLS from the first byte aiosmtpd does not count the
            # connection as TLS for AUTH (it only knows STARTTLS), so it would
            # offer no AUTH at all; there every byte is already encrypted.
            auth_require_tls=not implicit and not no_tls,
            auth_required=True,
        )
        if implicit:
            controller = Controller(Handler(), ssl_context=context, **kwargs)
        elif no_tls:
            controller = Controller(Handler(), **kwargs)
        else:
            controller = Controller(Handler(), tls_context=context, require_starttls=True, **kwargs)
        try:
            controller.start()
            break
        except Exception:
            if attempt == 19:
                raise
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(port))
    os.rename(tmp, port_file)
    try:
        asyncio.new_event_loop().run_forever()
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
