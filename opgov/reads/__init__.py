"""The reads room: what the services, the pages and the entrypoints read in common, below the
services (which may all import it) and above the adapters (formats/, db/, results/).

- :mod:`opgov.reads.common`: a command's context (``Ctx``), the settings, the database's version
  stamp, the operator, proposal and snapshot lookups, members and roles;
- :mod:`opgov.reads.registry`: the recorded decomposition rules, the registry's state, the out=
  variants, the home page's counts, the snapshots' history, the lifecycle steps coming due;
- :mod:`opgov.reads.torch`: torch's facts per release (recorded or shipped);
- :mod:`opgov.reads.models`: where the model corpus is and what it holds;
- :mod:`opgov.reads.runtimes`: the registered runtimes (what each has, per operator and dtype) and
  the releases opgov ships data of;
- :mod:`opgov.reads.database`: the database's revision and kind, its event log, who a token names;
- :mod:`opgov.reads.policy`: the BC exceptions, decisions and lifecycle states check-bc and the PR
  gate take from a database.

A read takes a session (or a ``Ctx``) and returns values; it writes nothing and logs no event.
"""
