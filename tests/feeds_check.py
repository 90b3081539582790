"""Reads a feed body on stdin with the real libraries and prints what they
saw as JSON, for tests/feeds.rs.

    feeds_check.py atom   < feed.xml    # feedparser (PyPI)
    feeds_check.py ics    < cal.ics     # icalendar (PyPI)

Run with the pinned virtualenv of tests/requirements.txt (.venv/bin/python).
"""

import datetime
import json
import sys


def atom(data):
    import feedparser

    parsed = feedparser.parse(data)
    links = lambda items: [
        {"rel": l.get("rel"), "href": l.get("href"), "type": l.get("type")} for l in items
    ]
    return {
        "bozo": bool(parsed.bozo),
        "bozo_exception": repr(parsed.get("bozo_exception")),
        "version": parsed.version,
        "feed": {
            "id": parsed.feed.get("id"),
            "title": parsed.feed.get("title"),
            "updated": parsed.feed.get("updated"),
            "links": links(parsed.feed.get("links", [])),
        },
        "entries": [
            {
                "id": e.get("id"),
                "title": e.get("title"),
                "updated": e.get("updated"),
                "updated_utc": datetime.datetime(*e.updated_parsed[:6]).isoformat() + "Z",
                "published": e.get("published"),
                "links": links(e.get("links", [])),
                "summary": e.get("summary"),
                "content": [c.get("value") for c in e.get("content", [])],
                "tags": [t.get("term") for t in e.get("tags", [])],
            }
            for e in parsed.entries
        ],
    }


def utc(value):
    """A DATE-TIME as `2026-11-01T07:00:00Z` (it must be UTC)."""
    assert isinstance(value, datetime.datetime), value
    assert value.utcoffset() == datetime.timedelta(0), value
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def ics(data):
    import icalendar

    calendar = icalendar.Calendar.from_ical(data)
    events = []
    for event in calendar.walk("VEVENT"):
        start = event.decoded("DTSTART")
        # RFC 5545 3.6.1: a DATE-TIME start without DTEND or DURATION ends when it starts.
        end = event.decoded("DTEND") if "DTEND" in event else start
        events.append(
            {
                "uid": str(event["UID"]),
                "start": utc(start),
                "end": utc(end),
                "has_dtend": "DTEND" in event,
                "dtstamp": utc(event.decoded("DTSTAMP")),
                "last_modified": utc(event.decoded("LAST-MODIFIED")),
                "status": str(event.get("STATUS")),
                "summary": str(event.get("SUMMARY")),
                "description": str(event.get("DESCRIPTION")),
                "url": str(event["URL"]) if "URL" in event else None,
                "alarms": [
                    {
                        "action": str(alarm.get("ACTION")),
                        "trigger_seconds": alarm.decoded("TRIGGER").total_seconds(),
                        "description": str(alarm.get("DESCRIPTION")),
                    }
                    for alarm in event.walk("VALARM")
                ],
                "errors": [str(e) for e in getattr(event, "errors", [])],
            }
        )
    return {
        "calendar": {
            name: calendar[name].to_ical().decode() if name in calendar else None
            for name in [
                "VERSION",
                "PRODID",
                "X-WR-CALNAME",
                "REFRESH-INTERVAL",
                "X-PUBLISHED-TTL",
            ]
        },
        "errors": [str(e) for e in getattr(calendar, "errors", [])],
        "events": events,
    }


if __name__ == "__main__":
    body = sys.stdin.buffer.read()
    result = {"atom": atom, "ics": ics}[sys.argv[1]](body)
    json.dump(result, sys.stdout, ensure_ascii=False)
