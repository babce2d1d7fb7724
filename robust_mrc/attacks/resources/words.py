"""English word lists of the attacks (one home for all of them), and the common-word list.

Closed-class lists (stopwords, auxiliaries, determiners, prepositions, noun-phrase words, wh-words), number and month
names, abbreviations that do not end a sentence, irregular past tenses, and
:func:`common_words` -- the most frequent WordNet/SemCor lemmas (AddCommon's vocabulary).
Attack-specific tables (AddSent's swap pairs and entity cue words) stay in their attack.
"""

from __future__ import annotations

import functools
import os

from robust_mrc.attacks.resources.wordnet import wordnet_source

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each few for from further had hadn't has hasn't have haven't having he
    he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
    in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on
    once only or other ought our ours ourselves out over own same shan't she she'd she'll she's
    should shouldn't so some such than that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've this those through to too under until up
    very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
    which while who who's whom why why's with won't would wouldn't you you'd you'll you're you've
    your yours yourself yourselves will shall may might must also just s t n't 's 're 've 'll 'd
    """.split()
)

# personal, possessive, reflexive, demonstrative and indefinite pronouns: never replaced by an attack
PRONOUNS = frozenset(
    """i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its itself we
    us our ours ourselves they them their theirs themselves this that these those who whom whose someone somebody
    something anyone anybody anything everyone everybody everything nobody nothing one ones""".split()
)

# words that frame an exam question rather than say what it asks ("Which of the following is true?",
# "What is the main idea of the passage?", "The best title is _"): they name the text itself, so a
# neighbour ("entry", "headline", "novella") keeps the question's meaning; the flip must come from
# the rest of the question (an antonym, else "not")
FRAME_WORDS = frozenset(
    "following passage passages article text paragraph paragraphs story title idea writer writers author authors reader "
    "readers narrator speaker sentence sentences statement statements word words phrase underlined part parts conclusion "
    "purpose option options answer question questions".split()
)

# the number words AddSent moves to a near number word ("five" -> "six"), in order from one
NUMBER_WORDS_IN_ORDER = tuple(
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen "
    "nineteen twenty".split()
)

# a negation and what stands for it once taken out ("" : dropped): AddSent's step 3 on a negated question
NEGATION_FLIPS = {
    "not": "",
    "n't": "",
    "never": "",
    "cannot": "can",
    "no": "some",
    "nothing": "something",
    "nobody": "somebody",
    "none": "some",
}
# what is left of an auxiliary once its "n't" goes ("ca" of "can't", "wo" of "won't")
NT_HOSTS = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}

# antonyms of exam words whose first WordNet sense is not the exam's ("right" there is "correct", not "east")
ANTONYM_OVERRIDES = {
    "right": "wrong",
    "wrong": "right",
    "correct": "wrong",
    "incorrect": "correct",
    "true": "false",
    "false": "true",
    "best": "worst",
    "worst": "best",
    "better": "worse",
    "worse": "better",
    "most": "least",
    "least": "most",
    "more": "less",
    "less": "more",
    "first": "last",
    "last": "first",
    "many": "few",
    "few": "many",
    "much": "little",
    "well": "badly",
}
# first-sense WordNet antonyms that do not read as the opposite in a question ("we ignore that" for "we know that")
WEAK_ANTONYMS = frozenset("know work walk stay let common follow order run keep take give make".split())
# words that are no adjective or verb of their own after these ("had better", "at least", "of course")
FIXED_AFTER = {"better": ("'d", "had"), "best": ("'d", "had"), "least": ("at",), "most": ("at",), "last": ("at",)}

AUXILIARIES = (
    "is",
    "was",
    "are",
    "were",
    "am",
    "be",
    "been",
    "can",
    "could",
    "will",
    "would",
    "shall",
    "should",
    "may",
    "might",
    "must",
    "do",
    "does",
    "did",
    "has",
    "have",
    "had",
)
# auxiliaries that take a "not" after them ("is not", "did not")
NEGATABLE_AUXILIARIES = frozenset("is was are were am can could will would shall should may might must does did do has have had".split())
DO_FORMS = frozenset(("do", "does", "did"))
BE_FORMS = frozenset(("is", "was", "are", "were"))
WH_WORDS = frozenset(("what", "which", "who", "whom", "whose", "when", "where", "why", "how"))
DETERMINERS = frozenset("a an the this that these those my your his her its our their some any no every each".split())
PREPOSITIONS = frozenset(("in", "on", "at", "for", "of", "to", "with", "by", "from", "about", "as", "into", "after", "before"))
# prepositions that put a name in a place ("born in X", "moved to X"): AddSent's fall-back names
PLACE_PREPOSITIONS = frozenset(("in", "at", "from", "to", "near", "into"))
# the words of a noun phrase besides nouns, adjectives and numbers: articles, possessives, demonstratives, 's
NOUN_PHRASE_WORDS = frozenset(("the", "a", "an", "'s", "his", "her", "its", "their", "this", "that", "these", "those"))

CARDINALS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
NUMBER_WORDS = frozenset(CARDINALS + ("twenty", "thirty", "forty", "fifty", "hundred", "thousand", "million", "billion"))
# every word that states a number or a count (cardinals to "billion", the tens, ordinals, "dozen", "half",
# "twice", "pair"...): a rewording that keeps the facts leaves them as they are
QUANTITY_WORDS = NUMBER_WORDS | frozenset(
    """zero thirteen fourteen fifteen sixteen seventeen eighteen nineteen sixty seventy eighty ninety trillion
    hundreds thousands millions billions dozen dozens score scores first second third fourth fifth sixth seventh
    eighth ninth tenth eleventh twelfth twentieth hundredth thousandth millionth half halves quarter quarters
    once twice thrice double triple single pair couple both""".split()
)
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)

# a full stop after these is not a sentence end ("Mrs. Green", "Jan. 5")
ABBREVIATIONS = frozenset(
    "mr mrs ms dr st prof sr jr mt vs etc no inc ltd co gen col capt lt sgt rev fig jan feb mar apr aug sept sep oct nov dec".split()
)

IRREGULAR_PAST = dict(
    pair.split(":")
    for pair in "go:went make:made take:took give:gave become:became begin:began build:built buy:bought come:came "
    "do:did find:found get:got have:had know:knew lead:led leave:left lose:lost meet:met pay:paid say:said "
    "see:saw sell:sold send:sent speak:spoke spend:spent teach:taught tell:told think:thought win:won "
    "write:wrote hold:held bring:brought run:ran grow:grew rise:rose fall:fell choose:chose eat:ate draw:drew "
    "fight:fought feel:felt keep:kept stand:stood understand:understood wear:wore break:broke catch:caught "
    "drive:drove fly:flew forget:forgot hear:heard ride:rode sing:sang steal:stole swim:swam throw:threw "
    "set:set put:put cut:cut let:let read:read hit:hit cost:cost seek:sought sit:sat sleep:slept "
    "strike:struck mean:meant be:was beat:beat bear:bore bite:bit blow:blew dig:dug feed:fed forgive:forgave "
    "freeze:froze hang:hung hide:hid lay:laid lend:lent light:lit shake:shook shine:shone shoot:shot shut:shut "
    "sink:sank spread:spread spring:sprang stick:stuck sting:stung swear:swore sweep:swept swing:swung "
    "tear:tore wake:woke weep:wept wind:wound withdraw:withdrew".split()
)


FALLBACK_COMMON = (
    "time year people way day man thing woman life child world school state family student group "
    "country problem hand part place case week company system program question work government "
    "number night point home water room mother area money story fact month lot right study book "
    "eye job word business issue side kind head house service friend father power hour game line "
    "end member law car city community name president team minute idea kid body information back "
    "parent face others level office door health person art war history party result change "
    "morning reason research girl guy moment air teacher force education say get make go know "
    "take see come think look want give use find tell ask seem feel try leave call good new first "
    "last long great little own other old right big high different small large next early young "
    "important few public bad same able"
).split()


@functools.lru_cache(maxsize=4)
def common_words(n: int = 1000) -> tuple[str, ...]:
    """The ``n`` most frequent single-word lemmas of WordNet's sense counts (``cntlist``: SemCor,
    a part of the Brown corpus); :data:`FALLBACK_COMMON` without WordNet."""
    src = wordnet_source()
    if src is None or not (src / "cntlist").is_file() or os.environ.get("ROBUST_MRC_NO_WORDNET"):
        return tuple(FALLBACK_COMMON[:n])
    totals: dict[str, int] = {}
    with open(src / "cntlist", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) < 2 or not parts[0].isdigit():
                continue
            lemma = parts[1].split("%")[0]
            # SemCor tags proper names as person / location / group: leave those out
            if lemma.isalpha() and lemma.islower() and len(lemma) > 1 and lemma not in ("person", "location", "group"):
                totals[lemma] = totals.get(lemma, 0) + int(parts[0])
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
    return tuple(w for w, _ in ranked[:n])
