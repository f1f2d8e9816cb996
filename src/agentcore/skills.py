"""Agent Skills (agentskills.io): folders with a `SKILL.md` the model loads when a task needs
them.

`load_skills(*paths)` finds and reads them (leniently, as the specification's client guide
says: problems are returned, each naming its file). `AgentLoopConfig(skills=...)` or
`Agent(skills=...)` does the rest: the catalogue in the system prompt, `activate_skill` and
`read_skill_file` in the tools. The parts are public for a loop of one's own:
`skill_catalogue`, `skill_tools`, `active_skills`, `read_skill_file`. A skill's text is
untrusted input with the user's authority: see docs/security.md.
"""

from __future__ import annotations

from ._skills.loader import (
    MAX_FRONTMATTER_BYTES as MAX_FRONTMATTER_BYTES,
)
from ._skills.loader import (
    MAX_SKILL_FILE_BYTES as MAX_SKILL_FILE_BYTES,
)
from ._skills.loader import Skill as Skill
from ._skills.loader import SkillFileError as SkillFileError
from ._skills.loader import SkillProblem as SkillProblem
from ._skills.loader import SkillSet as SkillSet
from ._skills.loader import load_skills as load_skills
from ._skills.loader import skills_by_name as skills_by_name
from ._skills.tools import MAX_LISTED_FILES as MAX_LISTED_FILES
from ._skills.tools import MAX_SKILL_READ_BYTES as MAX_SKILL_READ_BYTES
from ._skills.tools import active_skills as active_skills
from ._skills.tools import read_skill_file as read_skill_file
from ._skills.tools import skill_catalogue as skill_catalogue
from ._skills.tools import skill_content as skill_content
from ._skills.tools import skill_tools as skill_tools

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "MAX_LISTED_FILES",
    "MAX_SKILL_FILE_BYTES",
    "MAX_SKILL_READ_BYTES",
    "Skill",
    "SkillFileError",
    "SkillProblem",
    "SkillSet",
    "active_skills",
    "load_skills",
    "read_skill_file",
    "skill_catalogue",
    "skill_content",
    "skill_tools",
    "skills_by_name",
]
