"""The generated gRPC stubs (grpcio-tools, package mail.v1) against a running service: send, schedule, batch, list
the account's emails, and read the events from a cursor until the sent email's first event shows.

    npm run clients:python          # writes sdk/python/gen (mail.v1 and mailer_rest)
    MAILER_API_KEY=mk_... PYTHONPATH=sdk/python/gen python sdk/python/example_grpc.py

MAILER_GRPC (default 127.0.0.1:8081, plain HTTP/2; use grpc.secure_channel behind TLS), MAILER_FROM (an address of a
verified domain of the key's account; default hello@example.com) and MAILER_TO (default you@example.net) say where
and what. It prints one line per step: `sent <id>`, `scheduled <id>`, `batch <job id>`, `listed <id> ...`,
`event <type> <email id>`.
"""

import datetime
import os
import sys
import time

import grpc
from mail.v1 import email_service_pb2 as mail
from mail.v1 import email_service_pb2_grpc as mail_grpc

channel = grpc.insecure_channel(os.environ.get("MAILER_GRPC", "127.0.0.1:8081"))
emails = mail_grpc.EmailServiceStub(channel)
# The API key goes with every call, as the REST API's Bearer header.
auth = [("authorization", f"Bearer {os.environ['MAILER_API_KEY']}")]
sender = os.environ.get("MAILER_FROM", "hello@example.com")
recipient = os.environ.get("MAILER_TO", "you@example.net")


def message(cls, **fields):
    # `from` is a Python keyword: the generated classes take it by name from a dict.
    return cls(**{"from": sender, "to": [recipient]}, **fields)


try:
    sent = emails.SendEmail(message(mail.SendEmailRequest, subject="Hello", text="It works."), metadata=auth)
    print("sent", sent.id)

    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    scheduled = emails.ScheduleEmail(
        message(mail.ScheduleEmailRequest, subject="Later", html="<p>An hour later.</p>", scheduled_at=at.isoformat()),
        metadata=auth,
    )
    print("scheduled", scheduled.id)

    batch = emails.SendBatch(
        mail.SendBatchRequest(
            emails=[message(mail.SendEmailRequest, subject=f"Batch {n}", text=f"Number {n}.") for n in (1, 2)]
        ),
        metadata=auth,
    )
    print("batch", batch.job_id)

    listed = emails.ListEmails(mail.ListEmailsRequest(page_size=10), metadata=auth)
    print("listed", *(email.id for email in listed.data))

    # Oldest first from a cursor (empty: the beginning); keep next_cursor to read each event once.
    cursor, deadline = "", time.monotonic() + 30
    while time.monotonic() < deadline:
        page = emails.ListEvents(mail.ListEventsRequest(after=cursor, limit=100), metadata=auth)
        for event in page.events:
            print("event", event.event, event.email.id if event.HasField("email") else "-")
        cursor = page.next_cursor or cursor
        if any(event.email.id == sent.id for event in page.events):
            break
        time.sleep(0.5)
    else:
        sys.exit(f"no event of {sent.id} within 30 s")
except grpc.RpcError as err:
    # The status code and the spec's message, e.g. INVALID_ARGUMENT "from: ...".
    sys.exit(f"refused: {err.code().name}: {err.details()}")
