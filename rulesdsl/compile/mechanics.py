"""The runtime's mechanic a `mechanic` entity declares, read once for both targets: the package writes its
constructor, the reference computes its odds with it."""

from __future__ import annotations

from rulesdsl.compile import ir
from rulesdsl.runtime.core import Grade, HighestMechanic, Outcome, RollBand, TotalMechanic, UnderMechanic


def records(entity: ir.Entity, name: str) -> tuple[ir.Record, ...]:
    """A field holding a list of records (none when left out)."""
    value = entity.fields.get(name)
    return tuple(r for r in (value if isinstance(value, tuple) else ()) if isinstance(r, ir.Record))


def _range(record: ir.Record, name: str) -> ir.Range | None:
    value = record.get(name)
    assert value is None or isinstance(value, ir.Range)
    return value


def highest_mechanic(entity: ir.Entity) -> HighestMechanic | None:
    """A highest-die mechanic (style `highest`), its bands' open ends closed at the die's faces; None for
    another style (the checks have refused a malformed one before any target reads it)."""
    die = entity.fields.get("die")
    if entity.fields.get("style") != "highest" or not isinstance(die, ir.Dice) or not die.terms:
        return None
    sides = die.terms[0].sides
    bands = []
    for band in records(entity, "outcomes"):
        faces, name = _range(band, "faces"), band.get("outcome")
        assert faces is not None and isinstance(name, str)
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


def under_bands(entity: ir.Entity, name: str, lowest: int, highest: int) -> tuple[RollBand, ...]:
    """A roll-under mechanic's `criticals` or `fumbles`, their rolls' open ends closed at the lowest and
    highest sums of its dice."""
    bands = []
    for record in records(entity, name):
        rolls, targets = _range(record, "rolls"), _range(record, "targets")
        assert rolls is not None
        low = rolls.low if rolls.low is not None else lowest
        high = rolls.high if rolls.high is not None else highest
        bands.append(RollBand(low, high, *((targets.low, targets.high) if targets is not None else (None, None))))
    return tuple(bands)


def under_mechanic(entity: ir.Entity) -> UnderMechanic | None:
    """A roll-under mechanic (style `under`); None for another style (the checks have refused a malformed
    one before any target reads it)."""
    die = entity.fields.get("die")
    if entity.fields.get("style") != "under" or not isinstance(die, ir.Dice) or not die.plain or not die.terms:
        return None
    dice = ir.runtime_dice(die)
    lowest, highest = dice.minimum, dice.maximum
    assert highest is not None  # plain dice
    grades = []
    for record in records(entity, "grades"):
        divide, outcome = record.get("divide"), record.get("outcome")
        assert isinstance(divide, int) and isinstance(outcome, str)
        grades.append(Grade(divide, outcome))
    return UnderMechanic(
        entity.id,
        entity.name,
        dice,
        tuple(grades),
        under_bands(entity, "criticals", lowest, highest),
        under_bands(entity, "fumbles", lowest, highest),
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
