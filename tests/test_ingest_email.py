"""E-mail input: arXiv listing mails and forwarded Daily Papers mails (fixtures written by us)."""

from __future__ import annotations

import base64
import datetime as dt
import html
import shutil
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from digest.cli import app
from digest.errors import SourceError
from digest.ingest import detect_format, load_sources, parse_text
from digest.ingest.htmltext import html_to_text
from digest.ingest.mailmsg import looks_like_email

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
ARXIV_MAIL = FIXTURES / "arxiv_listing_mail.eml"
FORWARDED = FIXTURES / "daily_papers_forwarded.eml"
HTML_ONLY = FIXTURES / "daily_papers_html_only.eml"
ABSTRACT = ("A made-up abstract that is long enough to read as prose. It has two sentences, "
            "and it says nothing at all about any real paper.")


def load(path: Path, **kwargs):
    result = load_sources([str(path)], **kwargs)
    assert result.errors == [], [str(e) for e in result.errors]
    return result


def mail(body: str, subtype: str = "plain", **headers: str) -> bytes:
    message = EmailMessage(policy=policy.SMTP)
    message["From"] = headers.get("sender", "someone@example.org")
    message["Subject"] = headers.get("subject", "papers")
    message["Date"] = headers.get("date", "Fri, 13 Nov 2026 09:00:00 +0000")
    message.set_content(body, subtype=subtype)
    return bytes(message)


def test_arxiv_listing_mail():
    result = load(ARXIV_MAIL)
    assert result.warnings == []
    lantern, branes, quokka = result.records  # the replaced (revised) paper is left out
    assert lantern.title == ("LanternKV: Streaming Key-Value Cache Eviction for Million-Token "
                             "Contexts")  # a wrapped Title: line is joined
    assert lantern.abstract.startswith("Long-context language models keep a key-value cache")
    assert "k ≤ 64 entries" in lantern.abstract and "1% accuracy" in lantern.abstract
    assert lantern.authors == ("Mira Okonkwo", "Tomás Lindqvist", "Ada Comma")
    assert (lantern.arxiv_id, lantern.url) == ("2611.04217", "https://arxiv.org/abs/2611.04217")
    assert lantern.published == dt.date(2026, 11, 12)
    assert (branes.arxiv_id, branes.url) == ("hep-th/0601999",
                                             "https://arxiv.org/abs/hep-th/0601999")
    assert branes.abstract.endswith("in the limit g_s → 0.")
    assert quokka.arxiv_id == "2611.05555"  # a cross-listing is kept
    assert [(r.sighting.source, r.sighting.position) for r in result.records] == [
        (str(ARXIV_MAIL), 1), (str(ARXIV_MAIL), 2), (str(ARXIV_MAIL), 3)]


def _crlf(raw: bytes) -> bytes:
    return raw.replace(b"\n", b"\r\n")


def _latin1_base64(raw: bytes) -> bytes:
    head, body = raw.split(b"\n\n", 1)
    head = head.replace(b"charset=utf-8", b"charset=iso-8859-1").replace(
        b"Content-Transfer-Encoding: 8bit", b"Content-Transfer-Encoding: base64")
    return head + b"\n\n" + base64.encodebytes(body.decode("utf-8").encode("iso-8859-1"))


def _latin1_8bit(raw: bytes) -> bytes:
    head, body = raw.split(b"\n\n", 1)
    return head.replace(b"charset=utf-8", b"charset=iso-8859-1") + b"\n\n" + body.decode(
        "utf-8").encode("iso-8859-1")


@pytest.mark.parametrize("variant", [_crlf, _latin1_base64, _latin1_8bit])
def test_the_listing_mail_in_other_line_endings_charsets_and_encodings(tmp_path, variant):
    path = tmp_path / "listing.eml"
    path.write_bytes(variant(ARXIV_MAIL.read_bytes()))
    result = load(path)
    assert result.warnings == [] and len(result.records) == 3
    assert result.records[0].authors[1] == "Tomás Lindqvist"
    assert result.records[0].title.endswith("Million-Token Contexts")


def test_the_listing_text_without_mail_headers_is_its_own_format():
    body = ARXIV_MAIL.read_text(encoding="utf-8").split("\n\n", 1)[1]
    assert detect_format(body, "listing.txt") == "arxiv-listing"
    assert [r.arxiv_id for r in parse_text(body, "listing.txt")] == [
        "2611.04217", "hep-th/0601999", "2611.05555"]


def test_a_listing_entry_without_abstract_is_kept_with_a_warning(tmp_path):
    body = ("\\\\\narXiv:2611.09999\nDate: Thu, 12 Nov 2026 10:00:00 GMT   (1kb)\n\n"
            "Title: Nothing Below Me\nAuthors: A. Nobody\n\\\\ ( https://arxiv.org/abs/x , 1kb)\n"
            "\\\\\narXiv:2611.09998\n\nTitle: Something Below Me\nAuthors: B. Body\n\\\\\n"
            f"  {ABSTRACT}\n\\\\ ( https://arxiv.org/abs/2611.09998 , 1kb)\n")
    path = tmp_path / "listing.eml"
    path.write_bytes(mail(body))
    result = load(path)
    empty, full = result.records
    assert (empty.title, empty.abstract) == ("Nothing Below Me", "")
    assert full.abstract == ABSTRACT
    (warning,) = result.warnings
    assert warning.startswith(f"{path} (text/plain part):2: entry 1")
    assert "no abstract" in warning


def test_forwarded_daily_papers_mail_quoted_printable_with_signature():
    result = load(FORWARDED)
    assert result.warnings == []  # the signature and the forward header are not entries
    assert [r.title for r in result.records] == [
        "Fernweh: Zero-Shot Navigation from Street-View Memories",
        "Sundial: Calibrated Time-Series Forecasts from Frozen Language Models"]
    assert all(r.abstract.endswith("datasets.") or r.abstract.endswith("map.")
               for r in result.records)
    # "Nov 13" has no year: the mail's Date: header gives it
    assert {r.published for r in result.records} == {dt.date(2026, 11, 13)}
    assert {r.sighting.source for r in result.records} == {str(FORWARDED)}


def test_an_html_only_mail_is_reduced_to_its_visible_text():
    (record,) = load(HTML_ONLY).records
    assert record.title == "Pebble: Tiny Recurrent Models for Sensor Streams"
    assert record.abstract.endswith("Tested in a café and a naïve greenhouse.")  # latin-1, base64
    assert record.published == dt.date(2026, 11, 14)
    text = " ".join([record.title, record.abstract])
    for hidden in ("Preheader", "Ignore Me", "Tracking Pixel", "<", "href", "huggingface"):
        assert hidden not in text


def test_a_listing_forwarded_as_an_attachment(tmp_path):
    outer = EmailMessage(policy=policy.SMTP)
    outer["From"], outer["Subject"] = "me@example.org", "Fwd: listing"
    outer.set_content("See the attached listing.\n")
    outer.add_attachment(_message(ARXIV_MAIL.read_bytes()))
    path = tmp_path / "fwd.eml"
    path.write_bytes(bytes(outer))
    assert len(load(path).records) == 3


def test_every_forwarded_listing_of_a_mail_adds_its_papers(tmp_path):
    """A mail forwarding two listings as attachments (message/rfc822), or a listing body and a
    forwarded one, kept only the first listing: the parts of forwarded mails competed with
    the mail's own for "the first text part that reads as a listing" (a probe, stop 31)."""
    outer = EmailMessage(policy=policy.SMTP)
    outer["From"], outer["Subject"] = "me@example.org", "Fwd: two listings"
    outer.set_content(FORWARDED_BODY)
    outer.add_attachment(_message(ARXIV_MAIL.read_bytes()))
    second = _message(ARXIV_MAIL.read_bytes().replace(b"2611.04217", b"2611.09999").replace(
        b"LanternKV", b"BeaconKV"))
    outer.add_attachment(second)
    path = tmp_path / "fwd2.eml"
    path.write_bytes(bytes(outer))
    records = load(path).records
    assert len(records) == 2 + 3 + 3  # the body's Daily Papers page, then each forwarded mail
    assert {r.arxiv_id for r in records} >= {"2611.04217", "2611.09999"}


FORWARDED_BODY = (f"Nov 13\n\nLyreNet: Tuning Strings with Graphs\n\n{ABSTRACT}\n\n"
                  f"OrbitKV: Caches in Orbit\n\n{ABSTRACT} Another sentence here.\n")


def _message(data: bytes) -> EmailMessage:
    message = message_from_bytes(data, policy=policy.default)
    assert isinstance(message, EmailMessage)
    return message


def test_an_unknown_charset_is_read_as_utf8_with_a_warning(tmp_path):
    data = mail(f"Nov 13\n\nCafé Title\n\n{ABSTRACT}\n").replace(b'charset="utf-8"',
                                                                   b'charset="x-made-up"')
    assert b"x-made-up" in data
    path = tmp_path / "odd.eml"
    path.write_bytes(data)
    result = load(path)
    assert result.records[0].title == "Café Title"
    (warning,) = result.warnings
    assert "its charset 'x-made-up' does not fit; read as UTF-8" in warning
    assert warning.startswith(f"{path} (text/plain part)")


@pytest.mark.parametrize("declared", [b"", b"; charset=utf-8", b"; charset=us-ascii"])
def test_latin1_bytes_under_no_or_a_wrong_charset_are_detected_and_reported(tmp_path, declared):
    head, body = ARXIV_MAIL.read_bytes().split(b"\n\n", 1)
    path = tmp_path / "listing.eml"
    path.write_bytes(head.replace(b"; charset=utf-8", declared) + b"\n\n" +
                     body.decode("utf-8").encode("latin-1"))
    result = load(path)
    assert result.records[0].authors[1] == "Tomás Lindqvist"  # not "Tom\ufffds"
    (warning,) = result.warnings
    assert warning.startswith(f"{path} (text/plain part)") and "decoded as cp1252" in warning


def test_a_mail_without_a_listing_is_a_clear_error_and_others_are_read(tmp_path):
    path = tmp_path / "hello.eml"
    path.write_bytes(mail("Hi! Lunch on Friday?\n"))
    result = load_sources([str(path), str(FIXTURES / "papers.tsv")])
    (error,) = result.errors
    assert error.source == str(path) and "no part of it is an arXiv listing" in error.problem
    assert "text/plain" in error.problem and error.fix
    assert len(result.records) == 1
    with pytest.raises(SourceError, match="hello.eml"):
        load_sources([str(path)], strict=True)


def test_stdin_bytes_and_text_and_a_directory(tmp_path):
    data = FORWARDED.read_bytes()
    assert len(load_sources(["-"], stdin=lambda: data).records) == 2
    assert len(load_sources(["-"], stdin=lambda: data.decode("ascii")).records) == 2
    shutil.copy(ARXIV_MAIL, tmp_path / "a.eml")
    shutil.copy(HTML_ONLY, tmp_path / "b.eml")
    result = load_sources([str(tmp_path)])
    assert [Path(r.sighting.source).name for r in result.records] == ["a.eml"] * 3 + ["b.eml"]


def test_cli_reads_a_listing_mail_on_stdin(tmp_path):
    result = CliRunner().invoke(app, ["summarize", "-", "--backend", "offline", "--week",
                                      "2026-W46"], input=ARXIV_MAIL.read_bytes())
    assert result.exit_code == 0, result.output
    assert "Quokka: Counting Words in Made-Up Corpora" in result.stdout
    assert "https://arxiv.org/abs/hep-th/0601999" in result.stdout


@pytest.mark.parametrize("text, expected", [
    ("From: a@example.org\nSubject: x\n\nbody", True),
    ("From a@example.org Fri Nov 13 09:00:00 2026\nFrom: a@x\nDate: today\n\n", True),
    ("Received: from x\n\tby y\nMIME-Version: 1.0\nContent-Type: text/plain\n\n", True),
    ("Subject: only one header\n\nbody", False),
    ("Title: A paper\nAbstract: not a mail\n\n", False),
    ("arXiv:2611.04217\nDate: Thu, 12 Nov 2026\n\nTitle: x", False),
    ("Mar 14\n\nFrom: Nowhere To Go\nSubject: a title\n", False),
])
def test_mail_detection(text, expected):
    assert looks_like_email(text) is expected


def test_detection_of_the_mail_fixtures():
    for path in (ARXIV_MAIL, FORWARDED, HTML_ONLY):
        assert detect_format(path.read_text(encoding="latin-1"), "download") == "email"


HEADERS = st.sampled_from(["From: a@example.org\n", "Subject: x\n", "MIME-Version: 1.0\n",
                           "Content-Type: multipart/alternative; boundary=b\n",
                           "Content-Type: text/html; charset=x\n",
                           "Content-Transfer-Encoding: base64\n", "--b\n", "\n", "\\\\\n",
                           "arXiv:2611.00001\n", "Title: T\n", "Nov 13\n", ABSTRACT + "\n",
                           "<p>", "</p>", "<script>", "=E2=96\n"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(HEADERS, st.text(max_size=20)), max_size=25).map("".join))
def test_any_mail_gives_records_or_a_clean_error(text):
    try:
        records = parse_text("From: a@example.org\nSubject: s\n" + text, "fuzz.eml", fmt="email")
    except SourceError as error:
        assert str(error).startswith("fuzz.eml")
        return
    assert all(r.title and r.sighting.source == "fuzz.eml" for r in records)


COMPLETE_MARKUP = st.sampled_from(["<p>", "</p>", "<br>", "<b>", "</b>", "<pre>", "</pre>",
                                   "<div style='display:none'>", "</div>", "&amp;", "<!-- c -->",
                                   "<script>", "</script>", "<td>"])
TEXT = st.text(st.characters(blacklist_characters="<&"), max_size=10)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(COMPLETE_MARKUP, TEXT), max_size=20).map("".join))
def test_html_to_text_never_shows_scripts_or_hidden_elements(markup):
    text = html_to_text(markup + "<script>SECRET</script><p style='display:none'>HIDDEN</p>")
    assert "SECRET" not in text and "HIDDEN" not in text


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_html_to_text_takes_any_text(markup):
    text = html_to_text(markup)
    assert text.endswith("\n") and all(line == line.rstrip() for line in text.split("\n"))


LISTING_PARTS = st.sampled_from(["\\\\", "\\\\ ( https://arxiv.org/abs/2611.00001 , 1kb)",
                                 "arXiv:2611.00001", "arXiv:hep-th/9901001 (*cross-listing*)",
                                 "arXiv:x", "Title: A Title", "  continued", "Authors: A, B and C",
                                 "Date: Thu, 12 Nov 2026 10:00:00 GMT (1kb)", "Date: junk",
                                 "replaced with revised version", "-" * 20, "%%--%%--", "",
                                 ABSTRACT])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(LISTING_PARTS, st.text(max_size=20)), max_size=30).map("\n".join))
def test_any_listing_text_gives_records_or_a_clean_error(text):
    try:
        records = parse_text(text, "fuzz.txt", fmt="arxiv-listing")
    except SourceError as error:
        assert str(error).startswith("fuzz.txt")
        return
    for position, record in enumerate(records, start=1):
        assert record.title and record.sighting.position == position
        assert record.url is None or record.url.startswith("https://arxiv.org/abs/")


@pytest.mark.parametrize("as_html", [False, True], ids=["text", "html"])
def test_a_real_seed_page_mailed_gives_the_same_records_as_the_page(seeds, tmp_path, as_html):
    page = seeds / "daily_papers_a.txt"
    text = page.read_text(encoding="utf-8")
    body = ("<html><body>" + "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n\n"))
            + "</body></html>") if as_html else text
    path = tmp_path / "mailed.eml"
    path.write_bytes(mail(body, subtype="html" if as_html else "plain"))
    mailed, direct = load(path), load(page)
    assert len(direct.records) > 50
    assert [(r.title, r.abstract) for r in mailed.records] == [
        (r.title, r.abstract) for r in direct.records]
    assert mailed.warnings == direct.warnings == []


def _many_parts(count: int, listing_at: int | None = None) -> bytes:
    """A multipart mail of ``count`` short text parts; the listing mail's body as part
    ``listing_at``."""
    listing = _message(ARXIV_MAIL.read_bytes()).get_body(("plain",)).get_content()
    parts = [listing if n == listing_at else f"Note {n}: nothing here.\n" for n in range(count)]
    body = "".join(f"--B\nContent-Type: text/plain\n\n{text}\n" for text in parts)
    return (b"From: someone@example.org\nSubject: papers\nMIME-Version: 1.0\n"
            b'Content-Type: multipart/mixed; boundary="B"\n\n' + body.encode() + b"--B--\n")


def test_a_mail_of_hundreds_of_parts_tries_only_the_first_ones(tmp_path):
    """Each text part was tried as a listing (~0.5 ms each): the first MAX_PARTS are, and the
    refusal or a warning says how many were not."""
    path = tmp_path / "parts.eml"
    path.write_bytes(_many_parts(500, listing_at=400))
    (error,) = load_sources([str(path)]).errors
    assert "500 text parts, of which the first 100 were tried" in str(error)
    assert "not tried: parts 101-500" in str(error)
    path.write_bytes(_many_parts(500, listing_at=1))
    result = load(path)
    assert len(result.records) == 3
    assert any("500 text parts, of which the first 100" in w for w in result.warnings)


def test_the_attachments_not_tried_are_named(tmp_path):
    """"it has 104 attachments, of which the first 100 were tried" named none of the four
    left: the README says the rest are named (a probe, this stop)."""
    listing = _message(ARXIV_MAIL.read_bytes()).get_body(("plain",)).get_content()
    parts = [f'--B\nContent-Type: text/plain\nContent-Disposition: attachment; '
             f'filename="n{n}.txt"\n\nNote {n}.\n' for n in range(104)]
    path = tmp_path / "attached.eml"
    path.write_bytes((f"From: someone@example.org\nSubject: papers\nMIME-Version: 1.0\n"
                      f'Content-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: '
                      f"text/plain\n\n{listing}\n" + "".join(parts) + "--B--\n").encode())
    result = load(path)
    (warning,) = [w for w in result.warnings if "attachments" in w]
    assert "104 attachments, of which the first 100 were tried" in warning
    assert "not tried: n100.txt, n101.txt, n102.txt, n103.txt" in warning


def test_a_mail_of_thousands_of_parts_is_refused_before_it_is_parsed(tmp_path):
    """20,000 parts (1.2 MB) took 10 s, a 64 MB mail of tiny parts minutes: the parser reads
    each part's headers through the header registry."""
    path = tmp_path / "parts.eml"
    path.write_bytes(_many_parts(5_000, listing_at=1))
    (error,) = load_sources([str(path)]).errors
    assert "5,001 MIME parts" in str(error) and "more than 1,000" in str(error)  # and the mail
    hook = CliRunner().invoke(app, ["ingest", "-", "--state", str(tmp_path / "s.sqlite")],
                              input=path.read_bytes())
    assert hook.exit_code == 1 and "5,001 MIME parts" in hook.output


_BR_LISTING = (
    "<div>\\\\<br>arXiv:2611.20001<br>Date: Mon, 16 Nov 2026 10:00:00 GMT (400kb)<br><br>"
    "Title: Token Dropping for Efficient Pretraining: Which Tokens Should Be<br>"
    "&nbsp;&nbsp;Replaced and When<br>Authors: Wen Li, Omar Farouk<br>Categories: cs.CL<br>"
    "\\\\<br>&nbsp;&nbsp;Pretraining large language models is expensive. We study token "
    "dropping, in which easy<br>&nbsp;&nbsp;tokens are removed from the middle layers, and "
    "halve pretraining cost.<br>\\\\ ( https://arxiv.org/abs/2611.20001 , 400kb)<br>"
    "\\\\<br>arXiv:2611.20002<br>Date: Mon, 16 Nov 2026 11:00:00 GMT (300kb)<br><br>"
    "Title: Sparse Probing of Made-Up Features in Small Transformers and<br>"
    "&nbsp;&nbsp;Their Training Dynamics<br>Authors: Ada Park and<br>&nbsp;&nbsp;Bo Lin<br>"
    "Categories: cs.LG<br>\\\\<br>&nbsp;&nbsp;We probe small transformers for made-up "
    "features with sparse linear probes and<br>&nbsp;&nbsp;find that most features live in a "
    "handful of neurons.<br>\\\\ ( https://arxiv.org/abs/2611.20002 , 300kb)<br></div>")


def test_an_html_arxiv_listing_with_br_breaks_keeps_wrapped_titles_and_every_paper():
    """Outside <pre> the indentation of a wrapped Title: line is gone: the line went to the
    entry's status, titles and authors were cut ("... Transformers and", "Ada Park and"), and
    a title wrapping at "Replaced" made its paper a left-out revision (a probe, stop 28)."""
    mail = ("From: Reader <reader@example.org>\nTo: papers@example.org\nSubject: Fwd: cs daily\n"
            "Date: Tue, 17 Nov 2026 08:00:00 +0000\nMessage-ID: <m1@example.org>\n"
            "MIME-Version: 1.0\nContent-Type: text/html; charset=utf-8\n\n" + _BR_LISTING + "\n")
    records = parse_text(mail, "br.eml")
    assert [(r.arxiv_id, r.title, r.authors) for r in records] == [
        ("2611.20001", "Token Dropping for Efficient Pretraining: Which Tokens Should Be "
         "Replaced and When", ("Wen Li", "Omar Farouk")),
        ("2611.20002", "Sparse Probing of Made-Up Features in Small Transformers and Their "
         "Training Dynamics", ("Ada Park", "Bo Lin"))]


@pytest.mark.parametrize("footer", [
    "You are receiving this email because you subscribed to Daily Papers on Hugging Face.\n\n"
    "To stop receiving these emails, unsubscribe here or update your notification settings "
    "in your account. Made-up Company, Inc., 1 Example Street, Springfield.",
    "You received this message because you follow trending papers. Manage your email "
    "preferences or unsubscribe at any time.",
    "Unsubscribe\n\nYou are receiving this email because you signed up for the weekly list "
    "of trending papers on our made-up site, and you can leave it at any time.",
])
def test_a_daily_papers_mails_footer_is_not_a_paper(tmp_path, footer):
    """The footer of a listing mail ("You are receiving this email because …" then "To stop
    receiving these emails, unsubscribe …") read as one more title and abstract: a paper
    that went into the issue (stop 31's note)."""
    page = (Path(__file__).parent.parent / "examples" / "daily_papers_2026-11-16.txt").read_text()
    whole = tmp_path / "page.eml"
    whole.write_bytes(mail(page, subject="Daily Papers"))
    signed = tmp_path / "footer.eml"
    signed.write_bytes(mail(f"{page.rstrip()}\n\n{footer}\n", subject="Daily Papers"))
    assert ([r.title for r in load(signed).records] == [r.title for r in load(whole).records])
    assert load(signed).warnings == load(whole).warnings


def test_a_paper_about_unsubscribing_is_still_a_paper():
    """Only a mail's own wording is a footer, not a paper that studies it."""
    text = ("Nov 16\n\nWhy Users Unsubscribe: A Study of Newsletter Churn\n\n" + ABSTRACT +
            " We ask why readers unsubscribe from research newsletters.\n")
    (record,) = parse_text(text, "page.txt", fmt="daily-papers")
    assert record.title == "Why Users Unsubscribe: A Study of Newsletter Churn"


def _with_archive(body: str, tmp_path: Path) -> Path:
    import io
    import zipfile

    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as archive:
        archive.writestr("listing.jsonl", '{"title": "A", "abstract": "B"}\n')
    message = EmailMessage(policy=policy.SMTP)
    message["From"], message["Subject"] = "lab@example.org", "this week's papers"
    message["Date"] = "Fri, 13 Nov 2026 09:00:00 +0000"
    message.set_content(body)
    message.add_attachment(packed.getvalue(), maintype="application", subtype="zip",
                           filename="listings.zip")
    message.add_attachment(b"\x89PNG\r\n", maintype="image", subtype="png", filename="logo.png")
    path = tmp_path / "zipped.eml"
    path.write_bytes(bytes(message))
    return path


def test_an_archive_attachment_is_named_as_not_read(tmp_path):
    """A mail whose listing came zipped was refused naming only its text part ("found:
    text/plain"), and beside a listing body the archive was passed over without a word
    (stop 31's note). An image is passed over quietly: mails carry logos."""
    alone = load_sources([str(_with_archive("Here are this week's papers.", tmp_path))])
    (error,) = alone.errors
    assert "listings.zip" in str(error) and "unpack" in str(error)
    assert "logo.png" not in str(error)
    beside = load(_with_archive(FORWARDED.read_text(), tmp_path))
    assert beside.records
    (warning,) = [w for w in beside.warnings if "listings.zip" in w]
    assert "not read" in warning and "unpack" in warning


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aeiourcbsptvdnglfmyY'UuRrMm -.")), max_size=80)
       .map(lambda t: t + " you are receiving this email") | st.text(max_size=80))
def test_the_footer_look_up_decides_as_the_pattern_does(text):
    from digest.ingest.daily_papers import _MAIL_FOOTER, _mail_footer

    assert _mail_footer(text) == bool(_MAIL_FOOTER.search(" ".join(text.split())))


@pytest.mark.parametrize("at_the_end", [False, True])
def test_a_paper_that_speaks_of_receiving_or_unsubscribing_is_kept_anywhere(at_the_end):
    """The footer filter dropped real papers without a word: one whose abstract says users
    would like "to stop receiving promotional newsletters", one on "manage your notification
    settings", one titled "Why You Are Receiving This Ad" (a re-probe, stop 32). Only a mail's
    own wording, in a page's last paragraphs, is a footer."""
    papers = [
        ("Inbox Zero: Modeling Newsletter Fatigue",
         "Many users would like to stop receiving promotional newsletters, yet they rarely "
         "unsubscribe. We model fatigue from a year of made-up inbox logs and show that a "
         "simple hazard model predicts churn."),
        ("Notify Less: Auditing Mobile Notification Design",
         "On most phones the option to manage your notification settings is buried. We audit "
         "forty made-up apps and measure how many taps it takes to silence each kind of alert."),
        ("Why You Are Receiving This Ad: Auditing Explanations of Targeted Advertising",
         "Platforms explain why a user sees an ad. We audit these explanations on made-up "
         "accounts and find that half of them name attributes the targeting never used."),
    ]
    page = (Path(__file__).parent.parent / "examples" / "daily_papers_2026-11-16.txt").read_text()
    extra = "".join(f"{title}\n\n{abstract}\n\n" for title, abstract in papers)
    text = page.rstrip() + "\n\n" + extra if at_the_end else page.replace(
        "ToolWeaver:", extra + "ToolWeaver:", 1)
    titles = [r.title for r in parse_text(text, "page.txt", fmt="daily-papers")]
    assert all(title in titles for title, _ in papers), titles


MAILCHIMP = ("Copyright \u00a9 2026 Daily Papers Digest, All rights reserved.\n\n"
             "You are receiving this email because you opted in via our website.\n\n"
             "Our mailing address is:\nDaily Papers Digest\n1 Example Street\nSpringfield\n\n"
             "Want to change how you receive these emails? You can update your preferences or "
             "unsubscribe from this list.")
SUBSTACK = ("Thanks for reading The Made-up Papers Letter! Subscribe for free to receive new "
            "posts and support my work.\n\n"
            "\u00a9 2026 Jane Doe, 548 Market Street, San Francisco, CA 94104. Unsubscribe\n\n"
            "Start writing")


@pytest.mark.parametrize("footer", [MAILCHIMP, SUBSTACK])
def test_a_footer_of_several_paragraphs_is_no_paper(tmp_path, footer):
    """A Mailchimp footer (copyright line, "You are receiving this email", the mailing
    address, "update your preferences or unsubscribe") became two papers, a Substack one
    three: the filter looked at three paragraphs (a re-probe, stop 32). A footer now runs
    from where it begins to the page's end."""
    page = (Path(__file__).parent.parent / "examples" / "daily_papers_2026-11-16.txt").read_text()
    whole = [r.title for r in parse_text(page, "page.txt", fmt="daily-papers")]
    signed = parse_text(f"{page.rstrip()}\n\n{footer}\n", "page.txt", fmt="daily-papers")
    assert [r.title for r in signed] == whole


def test_a_last_paper_about_emails_received_is_kept():
    """"… employees who received these emails from an internal-looking sender …" read as a
    footer, and the page's last paper was dropped without a word (a re-probe, stop 32): a
    footer is the mail speaking to its reader ("you are receiving this email")."""
    page = (Path(__file__).parent.parent / "examples" / "daily_papers_2026-11-16.txt").read_text()
    title = "PhishBench: Measuring Click-Through on Simulated Phishing Campaigns"
    text = (f"{page.rstrip()}\n\n{title}\n\nWe run simulated phishing campaigns across three "
            "made-up companies and find that employees who received these emails from an "
            "internal-looking sender clicked twice as often as others.\n")
    assert title in [r.title for r in parse_text(text, "page.txt", fmt="daily-papers")]
