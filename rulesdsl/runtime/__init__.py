"""The runtime that generated rules packages carry, as ordinary modules (see core.py). It is rulesdsl's code,
under the MIT licence: a generated package has the licence's text beside it, in _runtime/LICENSE."""
