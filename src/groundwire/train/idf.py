"""Build the word-rarity table (document frequencies) that core.idf reads, from the training pairs only.

    python -m groundwire.train.idf ../shared/data/train --out src/groundwire/models/idf.json.gz

Documents are the distinct premises and hypotheses of the commercial-licence training files (news, Wikipedia,
science abstracts, dialogue knowledge). Words are stemmed content words, as the checks see them. No dev file
is read, so no evaluation row shapes the weights.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter
from pathlib import Path

from groundwire.core.textutil import content_words

MIN_DF = 2
"""Words seen in fewer documents are left out; a word missing from the table counts as rarer than any in it."""


def document_frequencies(files: list[Path]) -> tuple[Counter[str], int]:
    seen: set[str] = set()
    df: Counter[str] = Counter()
    for path in files:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                for text in (row["premise"], row["hypothesis"]):
                    if text in seen:
                        continue
                    seen.add(text)
                    df.update(set(content_words(text)))
    return df, len(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("train_dir", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    df, documents = document_frequencies(sorted(args.train_dir.glob("*.jsonl")))
    table = {"documents": documents, "min_df": MIN_DF,
             "df": {w: n for w, n in sorted(df.items()) if n >= MIN_DF}}
    with gzip.open(args.out, "wt", encoding="utf-8") as fh:
        json.dump(table, fh, separators=(",", ":"))
    print(f"{len(table['df'])} words from {documents} documents -> {args.out} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
