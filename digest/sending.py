"""Mail sent once: the store records each sending of an issue, and whom it reached.

``still_to_send`` looks up the week's sendings first. A recipient a confirmed one reached
(the server took the message for them: 250) is not sent the issue again, unless
``resend``; when nobody is left, ``already_sent`` says so and nothing is sent (exit 0).
The sending is recorded *before* the message is handed over (week, Message-ID,
recipients, time) and confirmed with the server's answer and the recipients it took
after, so a run killed in between leaves an unconfirmed sending: the mail may or may not
have gone out, and rather than risk sending it twice the next run stops (exit 1) and says
how to check and ``resend``; so does a sending the store could not confirm after the
server took the message (a full disk: exit 1, saying the mail went out). Any error the
delivery raises (``DigestError``: a setting, a refusal or a temporary failure of the whole
message) means the server did not accept the message, so the record is removed and the
retry sends; a recipient turned away while others were taken is left out of the record, so
the retry sends to them only. Without a state store there is nothing to remember: every run sends.
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import DigestError, MailError, StateError
from .mail import Delivered, mailbox
from .state import Store
from .testhook import pause_at


def still_to_send(store: Store | None, week: str, recipients: tuple[str, ...], *,
                  resend: bool = False) -> tuple[str, ...]:
    """The recipients no confirmed sending of the week reached (all of them without a store
    or with ``resend``). An unconfirmed last sending is an error: it may have gone out."""
    earlier = store.sendings(week) if store is not None and not resend else []
    if earlier and earlier[-1]["sent_at"] is None:
        last = earlier[-1]
        raise MailError(
            f"a sending of {week} started at {last['started_at']} UTC (Message-ID "
            f"{last['message_id']}) was interrupted before the server confirmed it: it may "
            "have gone out. Check the mail server's log or a recipient's mailbox, then send "
            "it (again) with resend", setting="resend")
    reached = {mailbox(rcpt) for sending in earlier for rcpt in sending["recipients"]}
    return tuple(rcpt for rcpt in recipients if mailbox(rcpt) not in reached)


def already_sent(store: Store, week: str, recipients: tuple[str, ...]) -> str:
    """The line saying the week's issue reached every recipient already: nothing sent."""
    last = store.sendings(week)[-1]
    return (f"the issue of {week} was already sent to {', '.join(recipients)} (last at "
            f"{last['sent_at']} UTC, Message-ID {last['message_id']}); nothing sent (resend "
            "to send it again)")


def send_recorded(store: Store | None, week: str, message_id: str,
                  recipients: tuple[str, ...], deliver: Callable[[], Delivered]) -> Delivered:
    """Deliver, recording the sending before and what the server took after; return that,
    or raise the server's refusal of some recipients once the others are recorded."""
    delivered = _deliver_recorded(store, week, message_id, recipients, deliver)
    if delivered.refusal is not None:
        raise delivered.refusal
    return delivered


def _deliver_recorded(store: Store | None, week: str, message_id: str,
                      recipients: tuple[str, ...], deliver: Callable[[], Delivered]
                      ) -> Delivered:
    if store is None:
        return deliver()
    sending = store.begin_sending(week, message_id, recipients)
    pause_at("sending")
    try:
        delivered = deliver()
    except DigestError:  # the server accepted no DATA: nothing went out
        store.forget_sending(sending)
        raise
    try:
        store.finish_sending(sending, delivered.answer, delivered.accepted)
    except StateError as error:  # the mail is out: a retry could only stop at the record
        raise MailError(
            f"the issue of {week} went out to {', '.join(delivered.accepted)} (the server "
            f"answered {delivered.answer}), but {store.path} could not record it "
            f"({error.reason or error}): do not send it again. Make the store writable; a "
            f"later e-mail run of {week} will find this sending unconfirmed and stop") from None
    return delivered

