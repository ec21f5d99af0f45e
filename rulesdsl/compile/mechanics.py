"""The runtime's mechanic a `mechanic` entity declares, read once for both targets: the package writes its
constructor, the reference computes its odds with it."""

from __future__ import annotations

from rulesdsl.compile import ir
from rulesdsl.runtime.core import HighestMechanic, Outcome, TotalMechanic


def highest_mechanic(entity: ir.Entity) -> HighestMechanic | None:
    """A highest-die mechanic (style `highest`), its bands' open ends closed at the die's faces; None for
    another style (the checks have refused a malformed one before any target reads it)."""
    die = entity.fields.get("die")
    if entity.fields.get("style") != "highest" or not isinstance(die, ir.Dice) or not die.terms:
        return None
    sides = die.terms[0].sides
    bands = []
    outcomes = entity.fields.get("outcomes")
    for band in outcomes if isinstance(outcomes, tuple) else ():
        assert isinstance(band, ir.Record)
        faces, name = band.get("faces"), band.get("outcome")
        assert isinstance(faces, ir.Range) and isinstance(name, str)
        low, high = faces.low if faces.low is not None else 1, faces.high if faces.high is not None else sides
        bands.append(Outcome(name, low, high))
    critical, zero_dice = entity.fields.get("critical"), entity.fields.get("zero_dice")
    return HighestMechanic(
        entity.id,
        entity.name,
        sides,
        tuple(bands),
        critical if isinstance(critical, int) else None,
        zero_dice if isinstance(zero_dice, int) else None,
    )


def total_mechanic(entity: ir.Entity) -> TotalMechanic | None:
    """A total mechanic (style `total`): its die, what it explodes and fumbles on, its floor; None for another
    style."""
    die = entity.fields.get("die")
    if entity.fields.get("style") != "total" or not isinstance(die, ir.Dice) or not die.terms:
        return None
    explode, fumble, floor = (entity.fields.get(name) for name in ("explode_on", "fumble_on", "floor"))
    return TotalMechanic(
        entity.id,
        entity.name,
        ir.runtime_dice(die),
        explode if isinstance(explode, int) else None,
        fumble if isinstance(fumble, int) else None,
        floor if isinstance(floor, int) else None,
    )
