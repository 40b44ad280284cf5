"""Ownership and construction of havens (HAV-01..07, HAV-10..24): designs, upgrades,
contributions, repairs, transfers, wills, forsaking, crypt destruction by the outer haven's
owners, theft control; and their downtime resolution (DT-10 order: the pipeline calls
`ownership_changes_apply`, `forsaking_resolve`, `theft_resolve`, `construction_resolve`).

Lock order, everywhere here: the Structure row (the lock for its design, its projects and its
owner list), then the project row, then the character row (taken by `influence_spend`).

Secrecy (HAV-04): callers pass only structures and characters they got through
`havens.access`; refusals never name another player's character or haven."""

# ruff: noqa: F401
from .changes import _any_cycle as _any_cycle
from .changes import _recipient as _recipient
from .changes import _require_owner as _require_owner
from .changes import change_cancel as change_cancel
from .changes import crypt_destroy_vote as crypt_destroy_vote
from .changes import link_by_name as link_by_name
from .changes import structure_forsake_request as structure_forsake_request
from .changes import structure_transfer_request as structure_transfer_request
from .changes import structure_will_set as structure_will_set
from .common import BREACHED_HELD as BREACHED_HELD
from .common import BREACHED_REFUSED as BREACHED_REFUSED
from .common import COUNTABLE_KINDS as COUNTABLE_KINDS
from .common import CRYPT_BUILD_HELD as CRYPT_BUILD_HELD
from .common import CRYPT_DESTRUCTION as CRYPT_DESTRUCTION
from .common import CRYPT_REFUSES_MOBILITY as CRYPT_REFUSES_MOBILITY
from .common import KEY_MAX as KEY_MAX
from .common import MAX_QUANTITY as MAX_QUANTITY
from .common import NAME_MAX as NAME_MAX
from .common import NO_OPEN_CYCLE as NO_OPEN_CYCLE
from .common import NOT_YOURS as NOT_YOURS
from .common import THEFT_CANCELS as THEFT_CANCELS
from .common import UNKNOWN_OUTER as UNKNOWN_OUTER
from .common import VERSION_CONFLICT as VERSION_CONFLICT
from .common import AttributeRequest as AttributeRequest
from .common import DesignQuote as DesignQuote
from .common import Problem as Problem
from .common import QuoteLine as QuoteLine
from .common import _acts_for as _acts_for
from .common import _bounded_key as _bounded_key
from .common import _bump_version as _bump_version
from .common import _cited as _cited
from .common import _crypts_refuse_mobility as _crypts_refuse_mobility
from .common import _is_staff as _is_staff
from .common import _lines as _lines
from .common import _lock_structure as _lock_structure
from .common import _may_build as _may_build
from .common import _now as _now
from .common import _outer_is_mobile as _outer_is_mobile
from .common import _owner_ids as _owner_ids
from .common import _projects_for as _projects_for
from .common import _require_current_downtime as _require_current_downtime
from .common import _require_staff as _require_staff
from .common import _require_standing as _require_standing
from .common import design_quote as design_quote
from .design import contribution_key as contribution_key
from .design import crypt_outer_allowed as crypt_outer_allowed
from .design import project_cancel as project_cancel
from .design import project_contribute as project_contribute
from .design import project_release_held as project_release_held
from .design import repair_request as repair_request
from .design import structure_design as structure_design
from .design import structure_upgrade as structure_upgrade
from .design import upgrade_quote as upgrade_quote
from .resolution import _dead as _dead
from .resolution import _games_up_to as _games_up_to
from .resolution import _held_builds as _held_builds
from .resolution import _OwnerBook as _OwnerBook
from .resolution import _void_changes_of_destroyed as _void_changes_of_destroyed
from .resolution import construction_resolve as construction_resolve
from .resolution import forsaking_resolve as forsaking_resolve
from .resolution import ownership_changes_apply as ownership_changes_apply
from .resolution import theft_resolve as theft_resolve
from .rulings import _destroy as _destroy
from .rulings import _forget as _forget
from .rulings import structure_destroy as structure_destroy
from .rulings import structure_owner_set as structure_owner_set
from .rulings import theft_control_record as theft_control_record
