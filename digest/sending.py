"""Mail sent once: the store records each sending of an issue.

``send_once`` looks up the week's sendings first. A confirmed one (the server answered
250) means: say so and send nothing (exit 0), unless ``resend``. The sending is recorded
*before* the message is handed over (week, Message-ID, recipients, time) and confirmed
with the server's answer after, so a run killed in between leaves an unconfirmed
sending: the mail may or may not have gone out, and rather than risk sending it twice
the next run stops (exit 1) and says how to check and ``--resend``. A refusal or a
temporary failure (nothing was delivered) removes the record, so the retry sends.
Without a state store there is nothing to remember: every run sends.
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import MailError
from .state import Store
from .testhook import pause_at


def already_sent(store: Store | None, week: str, *, resend: bool = False) -> str | None:
    """A line saying the week's issue went out already (send nothing), or None to send.
    An unconfirmed earlier sending is an error: it may have gone out."""
    earlier = store.sendings(week) if store is not None and not resend else []
    if not earlier:
        return None
    last = earlier[-1]
    if last["sent_at"] is None:
        raise MailError(
            f"a sending of {week} started at {last['started_at']} UTC (Message-ID "
            f"{last['message_id']}) was interrupted before the server confirmed it: it may "
            "have gone out. Check the mail server's log or a recipient's mailbox, then send "
            "it (again) with resend", setting="resend")
    return (f"the issue of {week} was already sent to {', '.join(last['recipients'])} at "
            f"{last['sent_at']} UTC (Message-ID {last['message_id']}); nothing sent (resend "
            "to send it again)")


def send_recorded(store: Store | None, week: str, message_id: str,
                  recipients: tuple[str, ...], deliver: Callable[[], str]) -> str:
    """Deliver, recording the sending before and the server's answer after; return it."""
    if store is None:
        return deliver()
    sending = store.begin_sending(week, message_id, recipients)
    pause_at("sending")
    try:
        answer = deliver()
    except MailError:
        store.forget_sending(sending)
        raise
    store.finish_sending(sending, answer)
    return answer
