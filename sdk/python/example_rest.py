"""The generated REST client (openapi-python-client, package mailer_rest) against a running service: send, schedule,
batch, list the account's emails, and read the events from a cursor until the sent email's first event shows.

    npm run clients:python          # writes sdk/python/gen (mail.v1 and mailer_rest)
    MAILER_API_KEY=mk_... PYTHONPATH=sdk/python/gen python sdk/python/example_rest.py

MAILER_URL (default http://127.0.0.1:8080), MAILER_FROM (an address of a verified domain of the key's account;
default hello@example.com) and MAILER_TO (default you@example.net) say where and what. It prints one line per
step: `sent <id>`, `scheduled <id>`, `batch <job id>`, `listed <id> ...`, `event <type> <email id>`.
"""

import datetime
import os
import sys
import time
import uuid

from mailer_rest import AuthenticatedClient
from mailer_rest.api.emails import list_emails, list_events, schedule_email, send_batch, send_email
from mailer_rest.models import Error, ScheduleEmailBody, SendBatchBody, SendEmailBody, SendEmailRequest

client = AuthenticatedClient(
    base_url=os.environ.get("MAILER_URL", "http://127.0.0.1:8080"),
    token=os.environ["MAILER_API_KEY"],
)
sender = os.environ.get("MAILER_FROM", "hello@example.com")
recipient = os.environ.get("MAILER_TO", "you@example.net")


def ok(answer):
    """A documented refusal comes back as the Error model ({error, message}); anything else undocumented as None."""
    if answer is None or isinstance(answer, Error):
        sys.exit(f"refused: {answer.error}: {answer.message}" if answer else "unexpected answer")
    return answer


# Send now. The Idempotency-Key makes a retry of this very call (say, after a timeout) send once.
sent = ok(
    send_email.sync(
        client=client,
        body=SendEmailBody(from_=sender, to=[recipient], subject="Hello", text="It works."),
        idempotency_key=str(uuid.uuid4()),
    )
)
print("sent", sent.id)

# Schedule for an hour from now (a date with its zone, at most 30 days ahead).
scheduled = ok(
    schedule_email.sync(
        client=client,
        body=ScheduleEmailBody(
            from_=sender,
            to=[recipient],
            subject="Later",
            html="<p>An hour later.</p>",
            scheduled_at=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1),
        ),
    )
)
print("scheduled", scheduled.id)

# A batch: each item is a whole send request of its own.
batch = ok(
    send_batch.sync(
        client=client,
        body=SendBatchBody(
            emails=[
                SendEmailRequest(from_=sender, to=[recipient], subject=f"Batch {n}", text=f"Number {n}.")
                for n in (1, 2)
            ]
        ),
    )
)
print("batch", batch.job_id)

# The account's emails, newest first.
listed = ok(list_emails.sync(client=client, page_size=10))
print("listed", *(email.id for email in listed.data))

# The events, oldest first from a cursor (none: the beginning); next_cursor is where the next read starts.
# Keep next_cursor to read each event once; here, read until the sent email's first event has come.
cursor, deadline = None, time.monotonic() + 30
while time.monotonic() < deadline:
    kwargs = {"after": cursor} if cursor else {}
    page = ok(list_events.sync(client=client, limit=100, **kwargs))
    for event in page.events:
        print("event", event.event.value, event.email.id if event.email else "-")
    cursor = page.next_cursor or cursor
    if any(event.email and event.email.id == sent.id for event in page.events):
        break
    time.sleep(0.5)
else:
    sys.exit(f"no event of {sent.id} within 30 s")
