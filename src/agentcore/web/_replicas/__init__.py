"""The web chat's replicas: several `agentcore serve` processes over one PostgreSQL database.

- `lease`: a session's write lease, held only while a request writes, so any replica can
  continue any session.
- `relay`: a run's live events, Stops and forwarded messages reach the other replicas, through
  the `relay` table.
- `schema`: the `relay` table and its migrations, owned here (not by the session store, whose
  tables the relay never touches).
"""
