#!/usr/bin/env python3
"""Writes deploy/debian/copyright (`make copyright`): the package's
machine-readable copyright file (DEP-5), naming resetctl's own licence and
every crate the static binary bundles, with its licence as Cargo.lock's
versions declare it, and the C library it links (musl) and Rust's standard
library. tests/dist.rs runs it and fails when the committed file differs.

The crates are those of `cargo metadata --filter-platform
x86_64-unknown-linux-musl` reached from the `resetctl-cli` package through
normal dependencies (build scripts and dev-dependencies are not in the
binary; proc macros are listed, since code they write is). Each licence
named gets one standalone paragraph with its text, or a pointer to Debian's
/usr/share/common-licenses where it is there.

Usage: deploy/debian/copyright.py [CHECKOUT]  (prints the file)
"""

import json
import os
import re
import subprocess
import sys

TARGET = "x86_64-unknown-linux-musl"
ROOT_PACKAGE = "resetctl-cli"

# SPDX identifiers as DEP-5 spells its short names.
SHORT_NAMES = {
    "BSD-2-Clause": "BSD-2-clause",
    "BSD-3-Clause": "BSD-3-clause",
}

# Licences whose full text Debian ships in /usr/share/common-licenses.
COMMON = {
    "Apache-2.0": "Apache-2.0",
    "MPL-2.0": "MPL-2.0",
    "CC0-1.0": "CC0-1.0",
}

# Licences whose text is taken from a crate that carries it verbatim (a
# generic text, naming no holder of the crate's own), by crate and file.
FROM_CRATE = {
    "BSL-1.0": ("ryu", "LICENSE-BOOST"),
    "Unicode-3.0": ("unicode-ident", "LICENSE-UNICODE"),
    "CDLA-Permissive-2.0": ("webpki-roots", "LICENSE"),
}

MIT = """Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE."""

BSD_CONDITIONS = """Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice,
   this list of conditions and the following disclaimer.

2. Redistributions in binary form must reproduce the above copyright notice,
   this list of conditions and the following disclaimer in the documentation
   and/or other materials provided with the distribution.
"""

BSD_THIRD = """
3. Neither the name of the copyright holder nor the names of its
   contributors may be used to endorse or promote products derived from
   this software without specific prior written permission.
"""

BSD_DISCLAIMER = """
THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE
ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE
LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS
INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN
CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
POSSIBILITY OF SUCH DAMAGE."""

ISC_GRANT = """Permission to use, copy, modify, and/or distribute this software for any
purpose with or without fee is hereby granted"""

ISC_DISCLAIMER = """

THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE."""

TEXTS = {
    "MIT": MIT,
    "BSD-2-Clause": BSD_CONDITIONS + BSD_DISCLAIMER,
    "BSD-3-Clause": BSD_CONDITIONS + BSD_THIRD + BSD_DISCLAIMER,
    "ISC": ISC_GRANT + """, provided that the above
copyright notice and this permission notice appear in all copies.""" + ISC_DISCLAIMER,
    "0BSD": ISC_GRANT + "." + ISC_DISCLAIMER,
    "Zlib": """This software is provided 'as-is', without any express or implied
warranty. In no event will the authors be held liable for any damages
arising from the use of this software.

Permission is granted to anyone to use this software for any purpose,
including commercial applications, and to alter it and redistribute it
freely, subject to the following restrictions:

1. The origin of this software must not be misrepresented; you must not
   claim that you wrote the original software. If you use this software
   in a product, an acknowledgment in the product documentation would be
   appreciated but is not required.
2. Altered source versions must be plainly marked as such, and must not be
   misrepresented as being the original software.
3. This notice may not be removed or altered from any source distribution.""",
    "Unlicense": """This is free and unencumbered software released into the public domain.

Anyone is free to copy, modify, publish, use, compile, sell, or
distribute this software, either in source code form or as a compiled
binary, for any purpose, commercial or non-commercial, and by any
means.

In jurisdictions that recognize copyright laws, the author or authors
of this software dedicate any and all copyright interest in the
software to the public domain. We make this dedication for the benefit
of the public at large and to the detriment of our heirs and
successors. We intend this dedication to be an overt act of
relinquishment in perpetuity of all present and future rights to this
software under copyright law.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.
IN NO EVENT SHALL THE AUTHORS BE LIABLE FOR ANY CLAIM, DAMAGES OR
OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE,
ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR
OTHER DEALINGS IN THE SOFTWARE.

For more information, please refer to <https://unlicense.org/>""",
}

HEADER = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: resetctl
Source: https://github.com/resetctl/resetctl
Comment: /usr/bin/resetctl is statically linked: besides resetctl's own
 code it holds the Rust crates below, at the versions of Cargo.lock (each
 named crates.io/NAME-VERSION: Cargo fetches them from crates.io, they are
 not in resetctl's source tree), Rust's standard library and the musl C
 library. Made by deploy/debian/copyright.py (make copyright) from `cargo
 metadata`; tests/dist.rs fails when it is stale.

Files: *
Copyright: 2026 The resetctl developers
License: MIT or Apache-2.0
"""

TRAILER_FILES = [
    (
        "rust-std/*",
        "The Rust Project Developers",
        "MIT or Apache-2.0",
        "Rust's standard library (core, alloc, std) and its runtime crates,\n"
        "compiled into every Rust program.",
    ),
    (
        "musl/*",
        "2005-2020 Rich Felker, et al.",
        "MIT",
        "The musl C library (x86_64-unknown-linux-musl links it statically).",
    ),
]


def dep5(expression):
    """An SPDX expression as a DEP-5 License field, and its short names."""
    expr = expression.replace("/", " OR ")
    expr = re.sub(r"\s+", " ", expr).strip()
    # A parenthesised group joined by AND: DEP-5 lowers the precedence of
    # "and" with a comma before it ("A or B, and C").
    m = re.fullmatch(r"\((.*)\) AND (.*)", expr)
    if m:
        head, rest = dep5(m.group(1)), dep5(m.group(2))
        return f"{head[0]}, and {rest[0]}", head[1] | rest[1]
    if "(" in expr:
        raise SystemExit(f"copyright.py: cannot write {expression!r} in DEP-5 form")
    names = set()
    words = []
    tokens = expr.split(" ")
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in ("OR", "AND"):
            words.append(token.lower())
        elif token == "WITH":
            words.append(f"with {tokens[i + 1].replace('-exception', '')} exception")
            i += 1
        else:
            names.add(token)
            words.append(SHORT_NAMES.get(token, token))
        i += 1
    return " ".join(words), names


def license_paragraph(name, packages):
    short = SHORT_NAMES.get(name, name)
    if name in COMMON:
        body = (
            f"On Debian systems, the complete text of the {name} licence can be\n"
            f'found in "/usr/share/common-licenses/{COMMON[name]}".'
        )
    elif name in FROM_CRATE:
        crate, file = FROM_CRATE[name]
        package = packages.get(crate)
        if package is None:
            raise SystemExit(f"copyright.py: {name}'s text comes from {crate}, not bundled")
        path = os.path.join(os.path.dirname(package["manifest_path"]), file)
        with open(path, encoding="utf-8") as f:
            body = f.read().strip()
    elif name in TEXTS:
        body = TEXTS[name]
    else:
        raise SystemExit(f"copyright.py: no text for the licence {name}: add it")
    lines = [f"License: {short}"]
    for line in body.splitlines():
        lines.append(" " + line if line.strip() else " .")
    return "\n".join(lines) + "\n"


def main():
    checkout = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    out = subprocess.run(
        ["cargo", "metadata", "--locked", "--format-version", "1", "--filter-platform", TARGET],
        cwd=checkout,
        check=True,
        stdout=subprocess.PIPE,
    ).stdout
    meta = json.loads(out)
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    workspace = set(meta["workspace_members"])
    root = next(p["id"] for p in meta["packages"] if p["name"] == ROOT_PACKAGE)
    seen, stack = set(), [root]
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        for dep in nodes[pid]["deps"]:
            if any(kind["kind"] is None for kind in dep["dep_kinds"]):
                stack.append(dep["pkg"])
    bundled = sorted(
        (packages[pid] for pid in seen if pid not in workspace),
        key=lambda p: (p["name"], p["version"]),
    )
    by_name = {p["name"]: p for p in bundled}

    paragraphs = [HEADER]
    names = {"MIT", "Apache-2.0"}
    for p in bundled:
        if not p.get("license"):
            raise SystemExit(f"copyright.py: {p['name']} {p['version']} declares no licence")
        field, used = dep5(p["license"])
        names |= used
        authors = [re.sub(r"\s+", " ", a).strip() for a in p.get("authors") or []]
        holders = authors or [f"The {p['name']} developers"]
        copyright_field = "\n ".join(holders)
        paragraphs.append(
            f"Files: crates.io/{p['name']}-{p['version']}/*\n"
            f"Copyright: {copyright_field}\n"
            f"License: {field}\n"
        )
    for files, holder, field, comment in TRAILER_FILES:
        paragraphs.append(
            f"Files: {files}\nCopyright: {holder}\nLicense: {field}\n"
            + "Comment: "
            + "\n ".join(comment.splitlines())
            + "\n"
        )
    for name in sorted(names, key=str.lower):
        paragraphs.append(license_paragraph(name, by_name))
    sys.stdout.write("\n".join(paragraphs))


if __name__ == "__main__":
    main()
