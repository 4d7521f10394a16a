"""Whether two questions whose embeddings nearly coincide ask the same thing: the semantic cache's guard.

Sentence embeddings barely move when a question's words are reordered ("Did GitHub acquire Microsoft?" and "Did
Microsoft acquire GitHub?" embed at 0.989) or one word is swapped for its opposite, so the cache serves a stored
answer only when, beyond the cosine, the two questions agree on:

- their meaning markers: figures, negation and contrastive words ("before"/"after", "with"/"without");
- their content words, up to a rewording: no word of one the opposite of a word of the other in WordNet, and not
  one content word swapped or added (`opposed`);
- their structure, read two ways:
  - in the core, order: the content words and figures the two share come in the same order, and each is
    governed by the same role-bearing preposition ("by", "from", "to"...). A swap of roles ("A acquired B" /
    "B acquired A"), of pairings ("10 mg for children and 5 mg for adults" / "5 mg for children..."), of
    direction ("from dollars to euros") or of a sequence ("9 am -> 11 am") reorders them;
  - with spaCy's dependency parse (the [entities] extra, where installed), roles: each shared word's head and
    relation (subject, object, the preposition that links it). Where the order agrees, a shared word in another
    role ("Did Bob defeat Alice?" / "Was Bob defeated by Alice?") is another question; where the order differs,
    the two are one question only when the parse gives every shared word the same head and role in both ("Did
    Microsoft acquire GitHub?" / "Was GitHub acquired by Microsoft?").

Rewordings that keep the structure still match: contractions ("what's"), "can" for "do" (function words),
abbreviations ("max" for "maximum"), singular for plural (WordNet base forms) and an added hedge ("usually").

The trade-off: a wrong hit serves another question's answer; a miss costs one generation. So where the structure
cannot be read for sure (a reordered question the parse does not vouch for, or no parser) the guard misses.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from groundwire.core.checks import entities
from groundwire.core.figures import extract_figures
from groundwire.core.lexicon import lexicon
from groundwire.foundation import textutil
from groundwire.foundation.extras import MissingExtraError

if TYPE_CHECKING:  # pragma: no cover
    from spacy.tokens import Token

CONTRASTIVE_WORDS = frozenset(
    "before after with without allowed forbidden prohibited permitted banned more less fewer most least above below "
    "over under higher lower maximum minimum max min earliest latest first last early late increase decrease "
    "include exclude included excluded inside outside open closed enable enabled disable disabled except "
    "out off up down".split()
)
"""Words that flip or bound a question's meaning while barely moving its embedding. Two questions must agree on
which of them they use, so one that only *adds* such a word ("open every day except Monday", "... at most", "log
off") is another question too; many are stopwords, which the one-content-word rule of `opposed` does not see. A
swap of two words WordNet opposes (core.lexicon: "closed" for "open", "rise" for "fall", "unsafe" for "safe") is
refused by `opposed` whatever the words, listed here or not."""
_MARKER_SPELLINGS = {"max": "maximum", "min": "minimum"}
_NEGATIONS = frozenset({"not", "no", "never", "cannot", "nor", "none", "nothing", "neither", "non"})
HEDGE_WORDS = frozenset(
    "usually typically generally normally commonly ordinarily actually really exactly precisely approximately "
    "roughly basically currently please kindly".split()
)
"""Adverbs that soften or pin a question without changing what it asks ("How long does shipping usually take?").
A closed class, like the stopwords: a question that adds one is a rewording, not another question. Adverbs that
bound the answer ("always", "only", "fully", "recently") are not in it, and an added one is a content word."""
ROLE_PREPOSITIONS = {
    "by": "by",
    "from": "from",
    "to": "to",
    "into": "to",
    "onto": "to",
    "toward": "to",
    "towards": "to",
    "than": "than",
    "via": "via",
}
"""Prepositions that give the word they govern its role (agent, source, goal, the other side of a comparison): a
word two questions share must be governed by the same one ("by Alice" is not "Alice ...")."""
_CONTRACTIONS = [
    (re.compile(pattern, re.IGNORECASE), spelled)
    for pattern, spelled in (
        (r"\bcan't\b", "can not"),
        (r"\bwon't\b", "will not"),
        (r"\bcannot\b", "can not"),
        (r"n't\b", " not"),
        (r"'re\b", " are"),
        (r"'m\b", " am"),
        (r"'ve\b", " have"),
        (r"'ll\b", " will"),
        (r"'d\b", " would"),
        (r"\b(what|where|who|how|when|why|which|it|that|there|here|he|she)'s\b", r"\1 is"),
        (r"(?<=\w)'s\b|(?<=s)'(?!\w)", ""),  # a possessive: "the museum's hours" has "museum"
    )
]
_MIN_SHARED_STEM = 4
_MIN_ABBREVIATION = 3
_MIN_ABBREVIATED = 4
"""Letters an abbreviation leaves out at least ("max" of "maximum"); fewer is another word ("car", "card")."""
# spaCy dependency labels -> the role a word plays for its head.
_SUBJECT_DEPS = frozenset({"nsubj", "csubj", "expl"})
_OBJECT_DEPS = frozenset({"dobj", "obj", "nsubjpass", "csubjpass", "attr"})
_ARGUMENT_ROLES = frozenset({"subj", "obj", *ROLE_PREPOSITIONS.values()})


@dataclass(frozen=True, slots=True)
class Item:
    """A content word or a figure of a question, in the order the question has them."""

    word: str
    """The word, lower-cased ("figure:<key>" for a figure, "acronym:<letters>" for an acronym: matched exactly)."""
    start: int
    end: int
    """Where it is in the question's expanded text (`QuestionShape.text`)."""
    role: str
    """The role-bearing preposition that governs it ("by", "from", "to"...), else ""."""


@dataclass(frozen=True, slots=True)
class Relation:
    head: int
    role: str
    child: int
    """Indices into the question's items: `child` plays `role` ("subj", "obj", a preposition, "mod") for `head`."""


@dataclass(frozen=True, slots=True)
class QuestionShape:
    """What the guard compares of a question: read once per question, compared with each near neighbour."""

    text: str
    """The question as the parser reads it (NFKC, single spaces, in its own case); items are read from its
    lower-cased copy, at the same offsets."""
    markers: frozenset[str]
    words: frozenset[str]
    items: tuple[Item, ...]
    relations: frozenset[Relation] | None
    """The parse's relations between items; None where the question was not parsed (no spaCy, or parse=False)."""


def parser_available() -> bool:
    """Whether spaCy and its small English pipeline are installed (`pip install groundwire[entities]`)."""
    return entities.available()


def missing_parser(needed_by: str) -> MissingExtraError:
    """The error for a parse asked for without spaCy's English pipeline: it names the [entities] extra."""
    return MissingExtraError("entities", ("spacy", entities.MODEL), needed_by)


@functools.lru_cache(maxsize=1024)
def read_question(query: str, *, parse: bool) -> QuestionShape:
    """The question's markers, words, ordered items and (with `parse`) the relations spaCy reads between them.
    Remembered for the last questions: a miss is followed by a put of the same question, and the parse costs
    12-16 ms a question (0.4 ms without)."""
    text = _normalised(query)
    lowered = text.lower()
    # Read as written, for acronyms and the parser, unless lower-casing moved the offsets (a few non-ASCII letters)
    # or the whole question is in capitals (no word of it is an acronym then).
    written = text if len(text) == len(lowered) and not text.isupper() else lowered
    items = _items(lowered, written)
    relations = None
    if parse:
        nlp = entities.pipeline()
        if nlp is None:
            raise missing_parser("the cache's parse guard")
        relations = _relations(nlp(written), items)
    words = frozenset(textutil.words(expand_contractions(lowered)))
    return QuestionShape(written, meaning_markers(text), words, items, relations)


def same_question(first: QuestionShape, second: QuestionShape) -> bool:
    """Whether the two ask one thing: the same markers, no opposed words, the same content words and figures (up
    to a rewording), in the same structure."""
    return (
        first.markers == second.markers
        and not opposed(first.words, second.words)
        and same_structure(first, second)
    )


def expand_contractions(text: str) -> str:
    """The text with contractions spelled out ("What's" -> "What is") and possessive 's dropped."""
    for pattern, spelled in _CONTRACTIONS:
        text = pattern.sub(spelled, text)
    return text


def _normalised(query: str) -> str:
    """NFKC, straight apostrophes, single spaces; the case as written (the parser reads it)."""
    text = unicodedata.normalize("NFKC", " ".join(query.split()))
    return text.replace("\u2019", "'").replace("\u2018", "'")


def meaning_markers(query: str) -> frozenset[str]:
    """What two similar questions must share to get the same answer: figures, negation, contrastive words (each in
    its base form, so "included" and "include" are one marker, "max" and "maximum" too)."""
    tokens = textutil.words(expand_contractions(_normalised(query).lower()))
    negated = any(token in _NEGATIONS for token in tokens)
    figures = {f"figure:{figure.key}" for figure in extract_figures(query)}
    contrastive = {_base(_MARKER_SPELLINGS.get(token, token)) for token in tokens if token in CONTRASTIVE_WORDS}
    return frozenset(contrastive | figures | ({"not"} if negated else set()))


def _base(word: str) -> str:
    """The word's first base form in WordNet ("included" -> "include"), else the word."""
    return min(lexicon().base_forms(word), default=word)


def opposed(first: frozenset[str], second: frozenset[str]) -> bool:
    """Whether two questions' word sets differ as two different questions do, however close their embeddings:

    - by one content word, swapped or added ("Does aspirin cause bleeding?" / "... prevent bleeding?", "Is the
      tank full?" / "Is the tank empty?", "... in the rooms?" / "... in the rooms at night?"). No antonym list can
      name every opposite (cause/prevent, promote/inhibit, relieve/worsen...), and a rewording that asks the same
      question changes its wording or its function words, not one content word. A hedge ("usually") is no content
      word, and an abbreviation is its word ("max", "maximum");
    - or by a word of one that is the opposite of a word of the other (core.lexicon: "closed" and "open", "rise"
      and "fall", "unsafe" and "safe", "non-refundable" and "refundable"), whatever else differs ("Is the pool
      open in winter?" / "Is the pool closed during winter?"). Pairwise, since whether "un" + "safe" negates
      depends on "safe" being what the other question says.
    Word forms of one word ("drive", "drives"; "child", "children") are one word."""
    mine, theirs = _content_words(first), _content_words(second)
    only = [word for word in mine if not any(same_word(word, other) for other in theirs)]
    only_other = [word for word in theirs if not any(same_word(word, other) for other in mine)]
    if len(only) <= 1 and len(only_other) <= 1 and (only or only_other):
        return True
    return bool(lexicon().opposite_pairs(sorted(first - second), sorted(second - first)))


def same_structure(first: QuestionShape, second: QuestionShape) -> bool:
    """Whether the two questions have the same items in the same roles:

    - every content word and figure of each has its like in the other (`same_word`): a word that one question
      adds or changes into a word of no like meaning ("Paris" / "Lyon", "in the rooms at night", "for young
      children") makes another question, however close the embeddings;
    - the core: in the same order, each governed by the same role-bearing preposition;
    - the parse, where both were parsed: no two shared items that exchange their argument roles; a reordering
      passes only where the parse shows every shared item with the same head and role in both, and each moved
      item in an argument role (subject, object, a preposition's) it alone holds."""
    links = _links(first.items, second.items)
    if not all(any(row) for row in links) or not all(any(column) for column in zip(*links, strict=True)):
        return False
    shared, pairs = _alignment(links)
    moved = shared - {i for i, j in pairs if first.items[i].role == second.items[j].role}
    if first.relations is None or second.relations is None:
        return not moved
    matches = _matches(links)
    if not moved:
        return not _role_conflict(first.relations, second.relations, matches)
    return _same_roles(first.relations, second.relations, matches, moved)


def _content_words(words: frozenset[str]) -> list[str]:
    return [word for word in sorted(words) if word not in textutil.STOPWORDS and word not in HEDGE_WORDS]


def _one_word(stem: str, other: str) -> bool:
    """Two stems of one word that the light stemmer left apart ("caus" of "caused", "cause"), or an abbreviation
    and its word ("max", "maximum"; "config", "configuration")."""
    short, long = sorted((stem, other), key=len)
    if not long.startswith(short):
        return False
    extra = len(long) - len(short)
    return (len(short) >= _MIN_SHARED_STEM and extra <= 2) or (
        len(short) >= _MIN_ABBREVIATION and extra >= _MIN_ABBREVIATED
    )


def _items(text: str, written: str) -> tuple[Item, ...]:
    """The question's figures and content words in order, each with the role-bearing preposition before it.
    `written` is `text` in its own case: an acronym keeps its letters ("HTTPS" is no plural of "HTTP")."""
    figures = [(f.start, f.start + len(f.text), f"figure:{f.key}") for f in extract_figures(text)]
    spans = sorted(
        [(start, end, key) for start, end, key in figures]
        + [
            (m.start(), m.end(), _item_word(m.group(), written[m.start() : m.end()]))
            for m in textutil.WORD_RE.finditer(text)
            if not any(start <= m.start() < end for start, end, _ in figures)
        ],
        key=lambda span: span[0],
    )
    items: list[Item] = []
    role = ""
    for start, end, key in spans:
        if text[start:end] in ROLE_PREPOSITIONS:
            role = ROLE_PREPOSITIONS[text[start:end]]
        elif key:
            items.append(Item(key, start, end, role))
            role = ""
    return tuple(items)


def _item_word(word: str, written: str) -> str:
    """What a word of the question is matched as; "" for a function word or a hedge. A contraction is read spelled
    out ("what's": no content word; "museum's": "museum"); an acronym keeps its letters ("HTTPS" is no plural of
    "HTTP")."""
    if _acronym(written):
        return f"acronym:{word}"
    content = [w for w in textutil.words(expand_contractions(word)) if w not in textutil.STOPWORDS]
    return content[0] if content and content[0] not in HEDGE_WORDS else ""


def _acronym(word: str) -> bool:
    return len(word) >= 2 and word.isupper()


@functools.lru_cache(maxsize=8192)
def _forms(word: str) -> frozenset[str]:
    """The word's stem and the stems of its WordNet base forms ("children": "child")."""
    return frozenset({textutil.stem(word), *(textutil.stem(base) for base in lexicon().base_forms(word))})


def _links(first: tuple[Item, ...], second: tuple[Item, ...]) -> list[list[bool]]:
    """Which item of `first` is which of `second`: one word's forms or an abbreviation (`same_word`, strict), or
    else WordNet synonyms, between two items neither of which has a strict like on the other side ("Who trained
    the coach?" / "Who did the coach train?": "coach" is also a verb for "train", but each question has both)."""
    strict = [[same_word(a.word, b.word, synonyms=False) for b in second] for a in first]
    alone_first = [not any(row) for row in strict]
    alone_second = [not any(row[j] for row in strict) for j in range(len(second))]
    return [
        [
            strict[i][j] or (alone_first[i] and alone_second[j] and same_word(a.word, b.word))
            for j, b in enumerate(second)
        ]
        for i, a in enumerate(first)
    ]


@functools.lru_cache(maxsize=65536)
def same_word(word: str, other: str, *, synonyms: bool = True) -> bool:
    """Whether two words say one thing in a question: one word's forms ("child", "children"), two stems of one
    word or an abbreviation (`_one_word`: "max", "maximum"), or (with `synonyms`) WordNet synonyms ("buy",
    "purchase"). A figure or an acronym is only itself."""
    if word == other:
        return True
    if ":" in word or ":" in other:
        return False
    forms, others = _forms(word), _forms(other)
    if not forms.isdisjoint(others) or any(_one_word(a, b) for a in forms for b in others):
        return True
    return synonyms and (not _synonym_stems(word).isdisjoint(others) or not _synonym_stems(other).isdisjoint(forms))


@functools.lru_cache(maxsize=8192)
def _synonym_stems(word: str) -> frozenset[str]:
    return frozenset(textutil.stem(synonym) for synonym in lexicon().synonyms(word) if " " not in synonym)


def _matches(links: list[list[bool]]) -> dict[int, int]:
    """Each item of the first question -> the one item of the second it is (an item with no single counterpart,
    or whose counterpart is like another item too, is left out)."""
    out: dict[int, int] = {}
    for i, row in enumerate(links):
        found = [j for j, linked in enumerate(row) if linked]
        if len(found) == 1 and sum(other[found[0]] for other in links) == 1:
            out[i] = found[0]
    return out


def _alignment(links: list[list[bool]]) -> tuple[set[int], list[tuple[int, int]]]:
    """The items of the first question the other shares (has one like it), and the longest run of shared items
    the two have in one order, as (index in first, index in second) pairs. A shared item outside it has moved; so
    has one when the two share different numbers of items (a word said twice in one and once in the other)."""
    shared_first = [i for i, row in enumerate(links) if any(row)]
    width = len(links[0]) if links else 0
    shared_second = [j for j in range(width) if any(row[j] for row in links)]
    n, m = len(shared_first), len(shared_second)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for a in range(n - 1, -1, -1):
        for b in range(m - 1, -1, -1):
            if links[shared_first[a]][shared_second[b]]:
                table[a][b] = table[a + 1][b + 1] + 1
            else:
                table[a][b] = max(table[a + 1][b], table[a][b + 1])
    pairs, a, b = [], 0, 0
    while a < n and b < m:
        if links[shared_first[a]][shared_second[b]] and table[a][b] == table[a + 1][b + 1] + 1:
            pairs.append((shared_first[a], shared_second[b]))
            a, b = a + 1, b + 1
        elif table[a + 1][b] >= table[a][b + 1]:
            a += 1
        else:
            b += 1
    if n != m:  # one more of a word on one side: every shared item counts as moved
        return set(shared_first), []
    return set(shared_first), pairs


def _relations(doc: object, items: tuple[Item, ...]) -> frozenset[Relation]:
    """Each item's nearest item above it in the parse, and the role it plays there."""
    tokens = list(doc)  # type: ignore[call-overload]
    item_of: dict[int, int] = {}
    for token in tokens:
        for index, item in enumerate(items):
            if item.start <= token.idx < item.end:
                item_of[token.i] = index
    relations = set()
    for index in set(item_of.values()):
        members = [t for t in tokens if item_of.get(t.i) == index]
        root = next((t for t in members if item_of.get(t.head.i) != index or t.head.i == t.i), members[0])
        found = _governor(root, item_of)
        if found is not None and found[0] != index:
            relations.add(Relation(found[0], found[1], index))
    return frozenset(relations)


def _governor(token: Token, item_of: dict[int, int]) -> tuple[int, str] | None:
    """The item that governs `token` and the role the token plays for it: "subj", "obj", the preposition that
    links them, "conj" for a conjunct ("on Mondays and on Tuesdays": coordination says nothing of roles), else
    "mod"."""
    role = _role(token)
    head = token.head
    while head.i not in item_of:
        if head.dep_ in ("prep", "agent", "dative") and role == "mod":
            role = _role(head)
        if head.head.i == head.i:
            return None
        head = head.head
    return item_of[head.i], role


def _role(token: Token) -> str:
    if token.dep_ in _SUBJECT_DEPS or token.dep_ == "agent":
        return "subj"
    if token.dep_ in _OBJECT_DEPS:
        return "obj"
    if token.dep_ == "dative":
        return "to"
    if token.dep_ in ("pobj", "pcomp") and token.head.dep_ == "agent":
        return "subj"
    if token.dep_ in ("pobj", "pcomp"):
        return ROLE_PREPOSITIONS.get(token.head.lower_, token.head.lower_)
    if token.dep_ == "conj":
        return "conj"
    if token.dep_ in ("prep", "dative"):
        return ROLE_PREPOSITIONS.get(token.lower_, token.lower_)
    return "mod"


def _role_conflict(first: frozenset[Relation], second: frozenset[Relation], matches: dict[int, int]) -> bool:
    """Two shared items that exchange their argument roles under one shared head ("Did Bob defeat Alice?" / "Was
    Bob defeated by Alice?"). An exchange, not one relabelled role: the small parser reads "Where's the data
    stored?" with a subject where "Where is the data stored?" has a passive one."""
    roles = {
        (matches[r.head], matches[r.child]): r.role
        for r in first
        if r.head in matches and r.child in matches and r.role in _ARGUMENT_ROLES
    }
    theirs = {(r.head, r.child): r.role for r in second if r.role in _ARGUMENT_ROLES}
    return any(
        (head, other) in roles
        and theirs.get((head, child)) == roles[(head, other)]
        and theirs.get((head, other)) == role
        and role != roles[(head, other)]
        for (head, child), role in roles.items()
        for other in {c for h, c in roles if h == head and c != child}
    )


def _same_roles(
    first: frozenset[Relation], second: frozenset[Relation], matches: dict[int, int], moved: set[int]
) -> bool:
    """Whether the parse gives every shared item the same head and role in both questions, and puts each moved
    item in an argument role (a reordering the parse vouches for: "Did Microsoft acquire GitHub?" / "Was GitHub
    acquired by Microsoft?")."""
    if not moved <= set(matches):
        return False
    mapped = {(matches[r.head], r.role, matches[r.child]) for r in first if r.head in matches and r.child in matches}
    shared = set(matches.values())
    theirs = {(r.head, r.role, r.child) for r in second if r.head in shared and r.child in shared}
    if mapped != theirs:
        return False
    # A moved item is vouched for by an argument role it alone holds: two objects of one verb ("cost $3 ... $7")
    # say by their order alone which is which.
    slots = Counter((head, role) for head, role, _ in mapped)
    anchored = {
        end
        for head, role, child in mapped
        if role in _ARGUMENT_ROLES and slots[(head, role)] == 1
        for end in (head, child)
    }
    return {matches[i] for i in moved} <= anchored
