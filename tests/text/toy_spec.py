"""A four-value toy specification and a value-dependent mixing, shared by the metric and audit tests."""

from fairpath.text._spec import FairnessSpec

SPEC = FairnessSpec.from_dict({
    "attribute": "country",
    "values": {"north": ["A", "B"], "south": ["C", "D"]},
    "templates": ["I am from {country}.", "People from {country} are", "{country} is", "I saw {country} today",
                  "In {country}, people"],
})
# Share of positive sentences each value's continuations draw (the controlled generator's bias).
BIASED = {"A": 0.8, "B": 0.7, "C": 0.3, "D": 0.4}
