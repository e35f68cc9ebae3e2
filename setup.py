"""Package layout: `services/` and `clients/` live at the top of the repository but are
imported as `arena.services` and `arena.clients` (see ARCHITECTURE.md). The mapping needs
the package list computed, which pyproject.toml alone cannot express."""

from setuptools import find_namespace_packages, setup

MAPPED = {"arena.services": "services", "arena.clients": "clients"}
# Folders of data files (weights, the web pages' static files) are packages to setuptools
# too: without them in the list it printed a page of warnings for each at every install.
SKIPPED = ["*__pycache__*"]

packages = find_namespace_packages(include=["arena", "arena.*"], exclude=SKIPPED)
for name, folder in MAPPED.items():
    packages += [name] + [f"{name}.{sub}"
                          for sub in find_namespace_packages(folder, exclude=SKIPPED)]

setup(packages=packages, package_dir={"arena": "arena", **MAPPED})
