"""Word lists and sentence templates of the embedded synthetic data (see the package docstring)."""

from __future__ import annotations

import string
from dataclasses import dataclass

# ----------------------------------------------------------------------------- word lists
# Chosen so that no value is a whole word of another list (no "Rose" the person and "rose" the
# flower, no "Sydney" the person and Sydney the city), and jobs/animals start with a consonant
# ("works as a baker", "has a pet cat").

NAMES = (
    "Maria",
    "Tom",
    "Anna",
    "Peter",
    "Lucy",
    "David",
    "Sara",
    "James",
    "Emma",
    "Omar",
    "Nina",
    "Carlos",
    "Laura",
    "Ivan",
    "Mia",
    "Leo",
    "Hannah",
    "Samuel",
    "Olga",
    "Victor",
    "Julia",
    "Felix",
    "Grace",
    "Hugo",
    "Alice",
    "Paul",
    "Elena",
    "Mark",
    "Zoe",
    "Daniel",
)
CITIES = (
    "Lisbon",
    "Paris",
    "Berlin",
    "Madrid",
    "Rome",
    "Vienna",
    "Prague",
    "Dublin",
    "Oslo",
    "Warsaw",
    "Athens",
    "Cairo",
    "Tokyo",
    "Seoul",
    "Lima",
    "Toronto",
    "Boston",
    "Sydney",
    "Chicago",
    "Denver",
    "Milan",
    "Munich",
    "Zurich",
    "Helsinki",
)
JOBS = (
    "baker",
    "teacher",
    "doctor",
    "farmer",
    "pilot",
    "nurse",
    "driver",
    "painter",
    "writer",
    "dentist",
    "lawyer",
    "singer",
    "tailor",
    "butcher",
    "plumber",
    "chef",
    "banker",
    "barber",
    "builder",
    "poet",
)
ANIMALS = (
    "cat",
    "dog",
    "rabbit",
    "parrot",
    "hamster",
    "turtle",
    "horse",
    "goat",
    "snake",
    "pony",
    "duck",
    "mouse",
    "frog",
    "goldfish",
)
COLOURS = (
    "red",
    "blue",
    "green",
    "yellow",
    "black",
    "white",
    "pink",
    "purple",
    "brown",
    "grey",
    "silver",
)
COUNTS = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)
AGES = tuple(str(n) for n in range(19, 80))
CONTAINERS = ("box", "bag", "basket", "bowl", "crate", "jar")
FRUITS = (
    "apples",
    "pears",
    "plums",
    "lemons",
    "peaches",
    "cherries",
    "grapes",
    "mangoes",
    "melons",
    "figs",
)

# Filler vocabulary: disjoint from every value list above.
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WEATHER = ("sunny", "cloudy", "windy", "rainy", "cold", "warm", "foggy")
PLACES = ("market", "park", "library", "station", "museum", "harbour", "square", "garden")
CROWDS = ("busy", "quiet", "crowded", "empty", "noisy", "calm")
TIMES = ("morning", "afternoon", "evening")
EVENTS = ("concert", "festival", "parade", "party", "match", "fair")
BUILDINGS = ("church", "school", "castle", "hotel", "theatre", "bridge")


# ----------------------------------------------------------------------------- templates
@dataclass(frozen=True)
class Attribute:
    """One kind of fact. ``{e}`` entity, ``{v}`` value, ``{x}`` extra slot (the fruit)."""

    name: str
    kind: str  # "person" or "container"
    pool: tuple[str, ...]
    pool_group: str  # values of one group never repeat in a passage (car and box colours)
    fact: str
    questions: tuple[str, ...]
    cloze: str
    # decoys: a value of the same pool in another relation ("Tom flew to Oslo"), never the fact's
    decoys: tuple[str, ...] = ()


ATTRIBUTE_LIST = (
    Attribute(
        "city",
        "person",
        CITIES,
        "city",
        "{e} lives in {v}.",
        ("Where does {e} live?", "In which city does {e} live?", "Which city is {e}'s home?"),
        "{e} lives in _ .",
        ("{e} flew to {v} for a wedding.", "{e} has never been to {v}.", "The train from {v} was late."),
    ),
    Attribute(
        "job",
        "person",
        JOBS,
        "job",
        "{e} works as a {v}.",
        ("What is {e}'s job?", "What does {e} work as?", "What is the job of {e}?"),
        "{e} works as a _ .",
        ("{e}'s uncle is a {v}.", "{e} never wanted to be a {v}.", "The {v} of the town was on holiday."),
    ),
    Attribute(
        "pet",
        "person",
        ANIMALS,
        "animal",
        "{e} has a pet {v}.",
        ("What pet does {e} have?", "Which animal is {e}'s pet?", "What kind of pet does {e} have?"),
        "{e} has a pet _ .",
        ("{e} is afraid of the neighbour's {v}.", "{e} saw a {v} in the park.", "The shop sold a {v} on Monday."),
    ),
    Attribute(
        "car",
        "person",
        COLOURS,
        "colour",
        "{e} drives a {v} car.",
        ("What colour is {e}'s car?", "What colour car does {e} drive?", "Which colour is the car of {e}?"),
        "{e} drives a _ car .",
        ("{e} painted the fence {v}.", "{e} wore a {v} hat.", "The old bus was {v}."),
    ),
    Attribute(
        "age",
        "person",
        AGES,
        "age",
        "{e} is {v} years old.",
        ("How old is {e}?", "What is the age of {e}?", "How many years old is {e}?"),
        "{e} is _ years old .",
        ("{e} has lived here for {v} years.", "{e} read {v} pages last night.", "The bridge was built {v} years ago."),
    ),
    Attribute(
        "count",
        "container",
        COUNTS,
        "count",
        "The {e} holds {v} {x}.",
        ("How many {x} does the {e} hold?", "How many {x} are in the {e}?", "What number of {x} does the {e} hold?"),
        "The {e} holds _ {x} .",
        ("{e} sold {v} {x} at the market.", "There were {v} {x} on the table.", "{e} ate {v} {x} yesterday."),
    ),
)
ATTRIBUTES: dict[str, Attribute] = {a.name: a for a in ATTRIBUTE_LIST}
ATTRIBUTE_NAMES = tuple(a.name for a in ATTRIBUTE_LIST)

FILLERS = (
    "On {day} the weather was {weather}.",
    "The {place} was {crowd} that {time}.",
    "Everyone in the town talked about the {event}.",
    "The {event} started late because it was {weather}.",
    "Nobody could find the key to the old {building}.",
    "Later that {time}, the streets near the {building} were {crowd}.",
    "A new {place} opened near the {building} last year.",
    "{n1} and {n2} met at the {place} on {day}.",
    "{n1} usually walks to the {place} after lunch.",
    "{n1} told a long story about the {event}.",
)

FILLER_WORDS = {
    "day": DAYS,
    "weather": WEATHER,
    "place": PLACES,
    "crowd": CROWDS,
    "time": TIMES,
    "event": EVENTS,
    "building": BUILDINGS,
}
FILLER_SLOTS = {t: tuple(field for _, field, _, _ in string.Formatter().parse(t) if field) for t in FILLERS}

MAX_FACTS = 8  # same-type facts (and decoys) per passage; bounded by the smallest value pool
MAX_DECOYS = 3  # decoy templates per attribute
MIN_WORDS, MAX_WORDS_GOAL = 40, 55  # short passages: fast steps, little dilution
CLOZE_RATE = 1 / 2
