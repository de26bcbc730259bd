"""A webhook receiver: it verifies each request the service delivers with the Standard Webhooks library
(`standardwebhooks` from PyPI: HMAC-SHA256 over id, timestamp and raw body, compared in constant time, the timestamp
within 5 minutes), answers 204 to a good signature and 400 to any other, and prints `verified <event> <email id>`
for each verified event (`refused <reason>` otherwise).

    MAILER_WEBHOOK_SECRET=whsec_... python sdk/python/example_webhook.py 127.0.0.1:8090

MAILER_WEBHOOK_SECRET is the secret that creating the webhook (POST /v1/mail/webhooks) answered once. It prints
`listening <host>:<port>` when it is ready. The service refuses loopback and private webhook URLs unless
MAILER_WEBHOOK_ALLOW_PRIVATE=1. It needs only the standard library and standardwebhooks, not the generated clients.
"""

import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook, WebhookVerificationError

secret = os.environ.get("MAILER_WEBHOOK_SECRET") or sys.exit("MAILER_WEBHOOK_SECRET is not set")
# Secrets made before secret rotation existed are base64url after whsec_; the library reads standard base64 only
# (it would skip - and _), and the same bytes are written with + and / (docs/delivery.md).
hook = Webhook("whsec_" + secret.removeprefix("whsec_").replace("-", "+").replace("_", "/"))


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        # The signature covers the raw body: read it whole and verify it before trusting what it says.
        body = self.rfile.read(min(int(self.headers.get("Content-Length") or 0), 1 << 20))
        try:
            event = hook.verify(body, dict(self.headers.items()))
        except (WebhookVerificationError, ValueError) as err:  # ValueError: a malformed header, body or JSON
            # A 400: the service retries a delivery not answered 2xx, so a bad signature is never taken for a success.
            print("refused", err, flush=True)
            self.send_response(400)
            self.end_headers()
            return
        email = event.get("email") or {}
        print("verified", event.get("event"), email.get("id", "-"), flush=True)
        self.send_response(204)
        self.end_headers()

    def log_message(self, format, *args):
        pass  # one line per request is printed above


host, _, port = (sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:8090").rpartition(":")
server = ThreadingHTTPServer((host, int(port)), Receiver)
print("listening", f"{host}:{server.server_address[1]}", flush=True)
server.serve_forever()
