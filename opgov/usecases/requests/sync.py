"""What the sync bot's use cases ask (opgov.usecases.sync): the yaml files, and where to write."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from opgov.usecases.fields import Upload
from opgov.usecases.requests import Request


# form fields (the request is a multipart form): a plain bool reads "true" as the hand-written route did
_BESIDE = Field(default=False, description="tags is the tags.yaml found beside native_functions.yaml, not one the "
                                           "user named (a check then reads only its `- tag:` lines, as locally)")


class SyncFiles(Request):
    native_functions: Upload = Field(description="native_functions.yaml")
    tags: Upload | None = Field(default=None, description="tags.yaml: the one to check the tags against and declare "
                                                           "new ones in")
    tags_beside: bool = _BESIDE


class SyncCheck(SyncFiles):
    mode: Literal["check", "diff"] = Field(default="check", description="check: what is out of sync; diff: also the "
                                                                         "unified diff")


class SyncWrite(SyncFiles):
    dry_run: bool = Field(default=False, description="answer as for a write, but log nothing: the client cannot "
                                                     "write its files now (a lock left behind)")
    installed: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$",
                                  description="the SHA-256 a sync stopped between installing native_functions and "
                                              "logging it recorded (its intent file): if the file holds it and the "
                                              "log does not, the write is logged now, as found")
    installed_write: str | None = Field(default=None, pattern=r"^[0-9a-f]{32}$",
                                        description="the id of that stopped write (its intent file): it is logged "
                                                    "now unless an event carries that id, whatever an earlier sync "
                                                    "wrote")
    write_id: str | None = Field(default=None, pattern=r"^[0-9a-f]{32}$",
                                 description="this write's id, which its event carries (the client records it in "
                                             "its intent file before it installs the file)")
