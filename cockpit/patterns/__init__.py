"""The pattern library: failures turned into rules (`patterns/NN-slug.md`) and their triggers."""
