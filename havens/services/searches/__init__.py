"""Haven searches (HAV-25b), influence attacks (HAV-25c), reinforcement attacks and alarms
(HAV-26, HAV-10), mobile havens moving, and objects hidden on site (HID-01..02).

Secrecy (HAV-04) shapes every refusal here: a player's search names its target in words and
gets the same answer whether or not the name matches anyone; an attack on a structure the
attacker has not found is refused exactly like one on a structure that does not exist.

Influence is spent through `characters.services.influence.influence_spend`, one keyed spend per
Searcher and InfluenceAttack row, so a double click spends once. Resolution steps take a cycle,
run a fixed number of queries whatever the number of searches, and are guarded by a status, so
a re-run after a crash gives the effects of one run."""

# ruff: noqa: F401
from .common import CLOSED_CYCLE as CLOSED_CYCLE
from .common import KEY_MAX as KEY_MAX
from .common import NO_OPEN_CYCLE as NO_OPEN_CYCLE
from .common import PARTY_CODE_BYTES as PARTY_CODE_BYTES
from .common import TARGET_NAME_MAX as TARGET_NAME_MAX
from .common import UNKNOWN_CODE as UNKNOWN_CODE
from .common import UNKNOWN_HAVEN as UNKNOWN_HAVEN
from .common import _active_target as _active_target
from .common import _current_cycle as _current_cycle
from .common import _is_staff as _is_staff
from .common import _new_party_code as _new_party_code
from .common import _require_active as _require_active
from .common import _require_player as _require_player
from .common import _require_staff as _require_staff
from .common import _short_key as _short_key
from .common import _target_name as _target_name
from .hidden import _investigate as _investigate
from .hidden import auspex_level as auspex_level
from .hidden import hidden_object_register as hidden_object_register
from .hidden import hidden_object_remove as hidden_object_remove
from .hidden import hidden_object_search as hidden_object_search
from .influence_attacks import _current_find as _current_find
from .influence_attacks import _destroy_havens as _destroy_havens
from .influence_attacks import _resistance as _resistance
from .influence_attacks import attack_outcome_for_attacker as attack_outcome_for_attacker
from .influence_attacks import influence_attack_preview as influence_attack_preview
from .influence_attacks import influence_attack_submit as influence_attack_submit
from .influence_attacks import influence_attack_withdraw as influence_attack_withdraw
from .influence_attacks import influence_attacks_resolve as influence_attacks_resolve
from .reinforcement import LOCK_OUTCOMES as LOCK_OUTCOMES
from .reinforcement import WORKING_LOCK as WORKING_LOCK
from .reinforcement import AttackerEntry as AttackerEntry
from .reinforcement import _alarm_mail as _alarm_mail
from .reinforcement import _bid as _bid
from .reinforcement import _fire as _fire
from .reinforcement import _reinforcement as _reinforcement
from .reinforcement import alarm_firings_of as alarm_firings_of
from .reinforcement import lock_test_record as lock_test_record
from .reinforcement import reinforcement_attack_preview as reinforcement_attack_preview
from .reinforcement import reinforcement_attack_record as reinforcement_attack_record
from .search import Outcome as Outcome
from .search import SearchRuling as SearchRuling
from .search import _resolve as _resolve
from .search import _search_of_spend as _search_of_spend
from .search import _spend_for_key as _spend_for_key
from .search import _target_structures as _target_structures
from .search import mobile_havens_move as mobile_havens_move
from .search import search_at_game_record as search_at_game_record
from .search import search_join as search_join
from .search import search_outcomes as search_outcomes
from .search import search_results_override as search_results_override
from .search import search_results_release as search_results_release
from .search import search_submit as search_submit
from .search import search_target_link as search_target_link
from .search import search_withdraw as search_withdraw
from .search import searches_resolve as searches_resolve
