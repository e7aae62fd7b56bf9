"""The docs check itself (CTest `docs_references_selftest`, label unit): it passes the repository's docs, and it
fails a copy broken on purpose in each way it is meant to catch, naming the file, the line and what is wrong.

test_check_docs.py ROOT DIODE"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT, DIODE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_docs.py")
# Words the check refuses are split here, so that this file passes the check it tests.
HOUR_WORD, TICKET_WORD = "ni" + "ght", "iss" + "ue"
MODELS_MD = "docs/MODELS.md"


def check(root, diode=None):
    args = [sys.executable, CHECK, root] + (["--diode", diode] if diode else [])
    done = subprocess.run(args, capture_output=True, text=True)
    return done.returncode, [line for line in done.stdout.split("\n") if line]


def append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class RepositoryDocs(unittest.TestCase):
    def setUp(self):
        # A copy of README.md and docs/ beside links to everything else, so breaking it leaves the tree alone.
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        for name in os.listdir(ROOT):
            if name in ("README.md", "docs", ".git") or name.startswith("build"):
                continue
            os.symlink(os.path.join(ROOT, name), os.path.join(self.root, name))
        shutil.copy(os.path.join(ROOT, "README.md"), self.root)
        shutil.copytree(os.path.join(ROOT, "docs"), os.path.join(self.root, "docs"))

    def tearDown(self):
        self.dir.cleanup()

    def lines_of(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8") as f:
            return f.read().count("\n")

    def test_a_copy_passes_and_each_break_is_named(self):
        rc, found = check(self.root, DIODE)
        self.assertEqual(rc, 0, "\n".join(found))
        self.assertIn("docs checked", found[-1])

        breaks = {
            "docs/CLI.md": (
                "Sweep with `plugin/scripts/sweep-gpus.sh`.\n",
                "`plugin/scripts/sweep-gpus.sh` does not exist",
            ),
            "docs/PLUGIN.md": (
                "Run `python3 -m torch_diode.tools.sweep_gpus`.\n",
                "`python3 -m torch_diode.tools.sweep_gpus`",
            ),
            "docs/MODELS.md": (
                "```sh\ndiode sweep --workers-per-gpus 6 --db x.db   # a typo\n```\n",
                "`diode sweep --workers-per-gpus`: not an option",
            ),
            "docs/WORKBENCH.md": ("Then `diode swep --db x.db`.\n", "`diode swep`: `diode --help` lists no such"),
            "docs/DEVELOPING.md": (
                f'As {MODELS_MD}, "Across GPUs" says.\n',
                f'{MODELS_MD} has no section "Across GPUs"',
            ),
            "docs/AMD.md": ("![shot](screenshots/nothing.png)\n", "`screenshots/nothing.png` does not exist"),
            "docs/PACKAGE.md": ("See [the claim](BENCHMARKS.md#no-such-claim).\n", "BENCHMARKS.md has no such section"),
            "docs/FORMATS.md": (f"Measured the {HOUR_WORD} before.\n", f"{HOUR_WORD!r}"),
            "README.md": (f"As {TICKET_WORD} 44 asked.\n", f"'{TICKET_WORD} 44'"),
            "docs/PLANS.md": ("The lost data: `h100-ingraph-partial.jsonl`.\n", "is in no folder of trained_models/"),
        }
        for rel, (text, _) in breaks.items():
            append(os.path.join(self.root, rel), text)
        rc, found = check(self.root, DIODE)
        self.assertEqual(rc, 1, "\n".join(found))
        self.assertEqual(len(found), len(breaks), "\n".join(found))
        for rel, (text, expected) in breaks.items():
            line = self.lines_of(rel) - text.count("\n") + (2 if text.startswith("```") else 1)
            hits = [f for f in found if f.startswith(f"{rel}:{line}: ") and expected in f]
            self.assertEqual(len(hits), 1, f"{rel}:{line} {expected!r} not in\n" + "\n".join(found))


class SmallTree(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        write(self.root, "resources/plans/p.json", "{}")
        write(self.root, "resources/plans/q.json", "{}")
        write(self.root, "trained_models/h100/h100-a.jsonl", "")
        write(self.root, "core/a.h", "// This session of the sweep: a product word in code.\n")
        write(self.root, "docs/A.md", "# A\n\n## The claim `x`\n")

    def tearDown(self):
        self.dir.cleanup()

    def test_paths_relative_to_the_doc_globs_and_lists(self):
        write(
            self.root,
            "trained_models/h100/README.md",
            "| `../../resources/plans/p.json` | `h100-a.jsonl` |\n"
            "`resources/plans/{p,q}.json` and `resources/plans/*.json` and [A](../../docs/A.md#the-claim-x)\n",
        )
        write(self.root, "README.md", 'See docs/A.md, "The claim", and `./build/app/diode` (a build output).\n')
        self.assertEqual(check(self.root)[0], 0, check(self.root)[1])

        append(os.path.join(self.root, "trained_models/h100/README.md"), "`../../resources/plans/r.json`\n")
        append(os.path.join(self.root, "trained_models/h100/README.md"), "`resources/plans/{p,r}.json`\n")
        append(os.path.join(self.root, "trained_models/h100/README.md"), "`resources/plans/z*.json`\n")
        append(os.path.join(self.root, "trained_models/h100/README.md"), "`h100-b.jsonl`\n")
        append(os.path.join(self.root, "README.md"), "Prose names resources/plans/gone.json too.\n")
        rc, found = check(self.root)
        self.assertEqual(rc, 1)
        self.assertEqual(
            found,
            [
                "README.md:2: `resources/plans/gone.json` does not exist in the repository",
                "trained_models/h100/README.md:3: `../../resources/plans/r.json` does not exist in the repository",
                "trained_models/h100/README.md:4: `resources/plans/{p,r}.json` does not exist in the repository",
                "trained_models/h100/README.md:5: `resources/plans/z*.json` does not exist in the repository",
                "trained_models/h100/README.md:6: `h100-b.jsonl` is in no folder of trained_models/ or resources/",
            ],
        )

    def test_talk_in_code_and_sections_named_from_comments(self):
        write(self.root, "README.md", "# R\n")
        self.assertEqual(check(self.root)[0], 0)  # "session" is a product word in code
        write(self.root, "core/b.cpp", f"// Fixed for {TICKET_WORD} 26 F8: titles fit.\n")
        write(self.root, "plugin/x.py", '# How it works (docs/A.md,\n# "The other claim").\n')
        rc, found = check(self.root)
        self.assertEqual(rc, 1)
        self.assertIn(f"core/b.cpp:1: speaks of how it was made, not of what the code does: '{TICKET_WORD} 26'", found)
        self.assertIn('plugin/x.py:1: docs/A.md has no section "The other claim"', found)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
