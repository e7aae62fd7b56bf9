"""The docs are a reference that holds (CTest `docs_references`, label unit).

check_docs.py ROOT [--diode DIODE]

Reads README.md, docs/*.md, plugin/python/README.md and trained_models/*/README* under ROOT and fails (exit 1, one
line a finding, FILE:LINE: what) where they name what the repository does not have:
- a repository path in a code span, a code block or a link (`core/...`, `../../resources/...`, globs and
  `{a,b}` lists included) that does not exist; a link to a section (`FILE.md#anchor`) whose heading is gone;
- a shipped data file named alone (`h100-....jsonl`) that no folder of trained_models/ or resources/ holds;
- `python3 -m torch_diode...` naming a module that does not exist;
- with --diode, `diode SUBCOMMAND --option` naming a subcommand or option that `diode --help` does not list;
and where docs or code speak of how they were made rather than of the product: how machines were obtained,
work sessions, stops and issue numbers (TALK; in code files the narrower CODE_TALK, since a sweep session is a
product word there)."""

import argparse
import glob
import itertools
import os
import re
import subprocess
import sys

TALK = re.compile(
    r"\blent\b|\b(this|next|that|previous|earlier|later|same) session\b|\bdevice (time|budget)\b|asked for as"
    r"|\bnvidia-h[12]00(-x[0-9])?\b|\.probe/|\.devrun/|\bstop [0-9]+\b|\bissues? #?[0-9]+\b|(?<![\w&/])#[0-9]+\b"
    r"|\b(night|morning|evening|afternoon)('s)?\b|\bgiven back\b|\bcall[0-9]+\b|\bthe brief\b",
    re.IGNORECASE,
)
CODE_TALK = re.compile(
    r"\blent\b|\bdevice (time|budget)\b|asked for as|\bnvidia-h[12]00(-x[0-9])?\b|\.probe/|\.devrun/"
    r"|\bstop [0-9]+\b|\bissues? #?[0-9]+\b|\b(night|morning|evening|afternoon)('s)?\b",
    re.IGNORECASE,
)
CODE_SUFFIXES = (".cpp", ".h", ".py", ".sh", ".cmake", ".ui", "CMakeLists.txt")
SHIPPED_NAME = re.compile(r"^h[12]00-[\w.-]+\.(db|jsonl|json|diode)$")
SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
PROSE_PATH = re.compile(r"(?<![\w/.$-])((?:\.\./)*\.?[\w-]+/[\w./{},*-]*[\w*}/])")
SECTION_REF = re.compile(r'((?:docs/)?[A-Z]+\.md),?(?:[ \t]+|[ \t]*\n[ \t]*(?:///|//|#|\*)?[ \t]*)\(?"([^"\n]+)"')
SEPARATORS = {"&&", "||", "|", ";", "&", ">", "2>", ">>", "<"}
LAUNCHERS = {"time", "nice", "exec", "sudo", "$"}


def docs_of(root):
    names = ["README.md", "plugin/python/README.md"]
    names += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    names += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "trained_models", "*", "README*")))
    return [n for n in names if os.path.isfile(os.path.join(root, n))]


def code_files(root):
    """Tracked files where ROOT is a git checkout, else every file outside build folders."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=True).stdout
        files = out.split("\n")
    except (OSError, subprocess.CalledProcessError):
        files = []
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith("build") and d != ".git"]
            files += [os.path.relpath(os.path.join(folder, n), root) for n in names]
    return [f for f in files if f.endswith(CODE_SUFFIXES) and os.path.isfile(os.path.join(root, f))]


def slug(heading):
    """The anchor GitHub gives a heading: lower case, code marks and punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors_of(path):
    seen, out, fenced = {}, set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fenced = not fenced
            m = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                out.add(s if s not in seen else f"{s}-{seen[s]}")
                seen[s] = seen.get(s, 0) + 1
    return out


def expand(token):
    """`a/{b,c}.h` -> a/b.h, a/c.h."""
    m = re.search(r"\{([^{}]*,[^{}]*)\}", token)
    if not m:
        return [token]
    return [x for part in m.group(1).split(",") for x in expand(token[: m.start()] + part + token[m.end() :])]


class Checker:
    def __init__(self, root, diode=None):
        self.root = os.path.abspath(root)
        self.findings = []
        self.top = {n for n in os.listdir(self.root) if not n.startswith("build") and n != ".git"}
        self.shipped = set()
        for folder in ("trained_models", "resources"):
            for _, _, names in os.walk(os.path.join(self.root, folder)):
                self.shipped.update(names)
        self.anchor_cache = {}
        self.heading_cache = {}
        self.diode = diode
        self.help_cache = {}

    def report(self, doc, line, text):
        self.findings.append(f"{doc}:{line}: {text}")

    # Paths ------------------------------------------------------------------------------------------------------
    def exists(self, path):
        return all(glob.glob(p) if any(c in p for c in "*?[") else os.path.exists(p) for p in expand(path))

    def check_path(self, doc, line, token, from_doc_dir):
        base = os.path.dirname(os.path.join(self.root, doc)) if from_doc_dir else self.root
        if token.startswith("../"):
            base = os.path.dirname(os.path.join(self.root, doc))  # a command runs from ROOT; `../` is the doc's
        target = os.path.normpath(os.path.join(base, token))
        inside = os.path.relpath(target, self.root)
        if inside.startswith("..") or inside.split(os.sep)[0].startswith("build"):
            return  # outside the repository, or a build output
        if not self.exists(target):
            self.report(doc, line, f"`{token}` does not exist in the repository")

    def looks_like_repo_path(self, token):
        if token.startswith(("./", "../")):
            return "/" in token[3:] or token.startswith("../")
        first = token.split("/", 1)[0]
        return "/" in token and first in self.top

    def check_token(self, doc, line, token):
        token = token.strip("[](),;:'\"").rstrip(".")
        token = re.sub(r"^\$PWD/", "", token)
        if "=" in token:
            token = token.split("=", 1)[1]
        if "://" in token or not token:
            return
        if self.looks_like_repo_path(token):
            self.check_path(doc, line, token, from_doc_dir=False)
        elif SHIPPED_NAME.match(token) and token not in self.shipped:
            self.report(doc, line, f"`{token}` is in no folder of trained_models/ or resources/")

    def check_link(self, doc, line, target):
        if re.match(r"^[a-z]+:", target):
            return
        path, _, anchor = target.partition("#")
        file = os.path.normpath(os.path.join(os.path.dirname(os.path.join(self.root, doc)), path)) if path else None
        if path:
            self.check_path(doc, line, path, from_doc_dir=True)
        if anchor and (file is None or (file.endswith(".md") and os.path.isfile(file))):
            file = file or os.path.join(self.root, doc)
            if file not in self.anchor_cache:
                self.anchor_cache[file] = anchors_of(file)
            if anchor not in self.anchor_cache[file]:
                self.report(doc, line, f"link to `{target}`: {os.path.relpath(file, self.root)} has no such section")

    def check_section_names(self, path, text):
        """`docs/FILE.md, "Title"` in docs and comments (the title may start on the next comment line): FILE has a
        heading that starts with Title, or names `Title` in a code span."""
        for m in SECTION_REF.finditer(text):
            name, title = m.group(1), m.group(2)
            file = os.path.join(self.root, name if "/" in name else os.path.join("docs", name))
            if not os.path.isfile(file):
                continue  # the path check names a missing file
            if file not in self.heading_cache:
                with open(file, encoding="utf-8") as f:
                    body = f.read()
                heads = [h.replace("`", "").lower() for h in re.findall(r"^#{1,6}\s+(.*)$", body, re.MULTILINE)]
                self.heading_cache[file] = (heads, body)
            heads, body = self.heading_cache[file]
            if not any(h.startswith(title.lower()) for h in heads) and f"`{title}`" not in body:
                self.report(path, text.count("\n", 0, m.start()) + 1, f'{name} has no section "{title}"')

    # Commands ---------------------------------------------------------------------------------------------------
    def help_text(self, sub):
        if sub not in self.help_cache:
            args = [self.diode] + ([sub] if sub else []) + ["--help"]
            done = subprocess.run(args, capture_output=True, text=True)
            self.help_cache[sub] = done.stdout + done.stderr if done.returncode == 0 else None
        return self.help_cache[sub]

    def check_command(self, doc, line, words):
        for i, w in enumerate(words):
            if w == "-m" and i + 1 < len(words) and words[i + 1].startswith("torch_diode"):
                module = words[i + 1].rstrip(".,;:")
                rel = os.path.join("plugin", "python", *module.split("."))
                if not (
                    os.path.isfile(os.path.join(self.root, rel + ".py")) or os.path.isdir(os.path.join(self.root, rel))
                ):
                    self.report(doc, line, f"`python3 -m {module}`: no such module under plugin/python")
            if not self.diode or os.path.basename(w) not in ("diode", "diode-train"):
                continue
            before = words[i - 1] if i else ""
            if before and before not in SEPARATORS | LAUNCHERS and not re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", before):
                continue  # a word in a sentence or a value (`--target diode`), not a command
            rest = list(itertools.takewhile(lambda x: x not in SEPARATORS, words[i + 1 :]))
            rest = [x.strip("[]") for x in rest]
            sub = rest[0] if rest and not rest[0].startswith("-") else ""
            top = self.help_text("")
            if sub and top is not None and not re.search(rf"^\s+{re.escape(sub)}\b", top, re.MULTILINE):
                if re.fullmatch(r"[a-z][a-z-]*", sub):
                    self.report(doc, line, f"`diode {sub}`: `diode --help` lists no such subcommand")
                continue
            helps = self.help_text(sub) if sub else top
            if helps is None:
                continue
            for opt in rest:
                name = opt.split("=", 1)[0].rstrip(".,;:)")
                if re.fullmatch(r"--[a-z][a-z0-9-]*", name) and not re.search(rf"{re.escape(name)}\b", helps):
                    self.report(
                        doc, line, f"`diode {sub} {name}`: not an option of `diode {sub} --help`".replace("  ", " ")
                    )

    # Files ------------------------------------------------------------------------------------------------------
    def check_doc(self, doc):
        fenced = False
        with open(os.path.join(self.root, doc), encoding="utf-8") as f:
            text = f.read()
        self.check_section_names(doc, text)
        for n, line in enumerate(text.split("\n"), 1):
            talk = TALK.search(line)
            if talk:
                self.report(doc, n, f"speaks of how it was made, not of the product: {talk.group(0)!r}")
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if fenced:
                spans = [re.split(r"\s#\s", " " + line, maxsplit=1)[0]]  # a shell comment is prose
            else:
                spans = [m.group(2) for m in SPAN.finditer(line)]
                prose = SPAN.sub(" ", line)
                for m in LINK.finditer(prose):
                    self.check_link(doc, n, m.group(1))
                for m in PROSE_PATH.finditer(LINK.sub(" ", prose)):
                    self.check_token(doc, n, m.group(1))
            for span in spans:
                words = span.split()
                for w in words:
                    self.check_token(doc, n, w)
                self.check_command(doc, n, words)

    def check_code(self, path):
        try:
            with open(os.path.join(self.root, path), encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            return
        for n, line in enumerate(text.split("\n"), 1):
            m = CODE_TALK.search(line)
            if m:
                self.report(path, n, f"speaks of how it was made, not of what the code does: {m.group(0)!r}")
        self.check_section_names(path, text)

    def run(self):
        docs = docs_of(self.root)
        for doc in docs:
            self.check_doc(doc)
        for path in code_files(self.root):
            if path != "tests/check_docs.py":
                self.check_code(path)
        return docs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root")
    parser.add_argument("--diode", help="the built diode, to check subcommands and options")
    args = parser.parse_args()
    checker = Checker(args.root, args.diode)
    try:
        if args.diode and checker.help_text("") is None:
            raise OSError("`--help` failed")
    except OSError as e:
        print(f"error: --diode {args.diode} cannot run: {e}", file=sys.stderr)
        return 2
    docs = checker.run()
    for finding in checker.findings:
        print(finding)
    if checker.findings:
        print(f"{len(checker.findings)} finding(s) in the docs and comments", file=sys.stderr)
        return 1
    print(f"{len(docs)} docs checked: every path, section, module and command they name exists; no session talk")
    return 0


if __name__ == "__main__":
    sys.exit(main())
