"use strict";
(function () {
  var node = document.getElementById("site-data");
  if (!node) return;
  var data = JSON.parse(node.textContent);
  var s = data.strings;
  var lang = document.documentElement.lang;
  var fmt = new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" });
  function ago(ms) {
    var sec = Math.floor(ms / 1000);
    if (sec < 60) return s.justNow;
    if (sec < 3600) return s.minutesAgo[0] + Math.floor(sec / 60) + s.minutesAgo[1];
    if (sec < 172800) return s.hoursAgo[0] + Math.floor(sec / 3600) + s.hoursAgo[1];
    return s.daysAgo[0] + Math.floor(sec / 86400) + s.daysAgo[1];
  }
  function countdown(ms) {
    var sec = Math.max(0, Math.floor(ms / 1000));
    var parts = [Math.floor(sec / 86400), Math.floor(sec / 3600) % 24, Math.floor(sec / 60) % 60, sec % 60];
    var out = [];
    for (var i = 0; i < 4; i++) if (parts[i] || out.length || i === 3) out.push(parts[i] + " " + s.units[i]);
    return out.join(" ");
  }
  function localDay(now) {
    var start = new Date(now);
    start.setHours(0, 0, 0, 0);
    var end = new Date(start);
    end.setDate(end.getDate() + 1);
    return [start.getTime(), end.getTime()];
  }
  function verdict(now) {
    if (data.sourceStatus && data.sourceStatus !== "ok") return { name: "unknown", why: s.distrustSource[0] + data.sourceStatusWords + s.distrustSource[1] };
    if (data.lastCheck === null) return { name: "unknown", why: s.distrustNever };
    if (now - data.lastCheck > data.trustHours * 3600000) return { name: "unknown", why: s.distrustStale[0] + data.trustHours + s.distrustStale[1] };
    // The newest confirmed reset of the day wins (verdict.rs, `verdict`);
    // a schedule not confirmed is shown only when none is, or told beside
    // it when its time came after it.
    var day = localDay(now), confirmed = null, unconfirmed = null;
    // Whether c is the newer: among equal times a completion, then the later listed.
    function newer(best, c) {
      return !best || c.at > best.at || (c.at === best.at && (c.how === "completed") >= (best.how === "completed"));
    }
    data.candidates.forEach(function (c) {
      if (c.at > now || c.at < day[0] || c.at >= day[1]) return;
      if (c.how === "completed" || c.how === "fulfilled") {
        if (newer(confirmed, c)) confirmed = c;
      } else if (newer(unconfirmed, c)) unconfirmed = c;
    });
    if (!confirmed && !unconfirmed) return { name: "no" };
    // A passed schedule is due until the matcher's tolerance has passed, then not confirmed.
    function how(c) {
      return c.how === "elapsed" && now < c.unconfirmedAt ? "due" : c.how;
    }
    var hit = confirmed || unconfirmed;
    var later = confirmed && unconfirmed && unconfirmed.at > confirmed.at ? unconfirmed : null;
    return { name: "yes", hit: hit, how: how(hit), later: later, laterHow: later && how(later) };
  }
  // "words: time · what details" into el, the time on one line (html/index.rs, `hit_line`).
  function hitLine(el, words, hit) {
    el.appendChild(document.createTextNode(words + s.colon));
    var time = document.createElement("span");
    time.className = "nowrap";
    time.textContent = fmt.format(new Date(hit.at));
    el.appendChild(time);
    el.appendChild(document.createTextNode(" · " + hit.what + " "));
    var a = document.createElement("a");
    a.href = hit.href;
    a.textContent = s.details;
    el.appendChild(a);
  }
  function paint() {
    var now = Date.now();
    var v = verdict(now);
    var el = document.getElementById("verdict");
    if (el) {
      // "Yes" only for a confirmed reset; a due or unconfirmed one says so (html/mod.rs, yes_word).
      el.textContent = v.name === "yes" ? { completed: s.yes, fulfilled: s.yes, due: s.yesDue, elapsed: s.yesUnconfirmed }[v.how] : s[v.name];
      el.className = "verdict verdict-" + v.name;
      el.setAttribute("data-verdict", v.name);
      document.getElementById("verdict-question").textContent = s.questionLocal;
      var detail = document.getElementById("verdict-detail");
      detail.textContent = "";
      if (v.name === "yes") {
        hitLine(detail, { completed: s.hitCompleted, fulfilled: s.hitFulfilled, elapsed: s.hitElapsed, due: s.hitDue }[v.how], v.hit);
      } else if (v.name === "no") {
        detail.textContent = s.noDetail;
      } else {
        detail.textContent = v.why;
      }
      var later = document.getElementById("verdict-later");
      if (later) {
        later.textContent = "";
        later.hidden = !v.later;
        if (v.later) hitLine(later, v.laterHow === "elapsed" ? s.laterUnconfirmed : s.laterDue, v.later);
      }
      var note = document.getElementById("operator-note");
      if (note) note.hidden = v.name !== "unknown";
    }
    document.querySelectorAll("time[data-local]").forEach(function (t) {
      var out = t.parentNode.querySelector("[data-local-of='" + t.id + "']");
      if (out) out.textContent = fmt.format(new Date(t.getAttribute("datetime")));
    });
    document.querySelectorAll("[data-ago]").forEach(function (t) {
      t.textContent = ago(now - Number(t.getAttribute("data-ago")));
    });
    var c = document.getElementById("countdown");
    if (c) c.textContent = countdown(Number(c.getAttribute("data-target")) - now);
  }
  paint();
  setInterval(paint, 1000);
})();
