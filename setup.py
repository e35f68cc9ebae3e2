"""Package layout: `services/` and `clients/` live at the top of the repository but are
imported as `arena.services` and `arena.clients` (see ARCHITECTURE.md). The mapping needs
the package list computed, which pyproject.toml alone cannot express."""

from setuptools import find_packages, setup

MAPPED = {"arena.services": "services", "arena.clients": "clients"}

packages = find_packages(include=["arena", "arena.*"])
for name, folder in MAPPED.items():
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir={"arena": "arena", **MAPPED})
