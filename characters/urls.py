"""Pages of the characters app, under /c/<slug>/ (the project's urls.py includes them)."""

from django.urls import path

from .views import creation, imports, people, purchases, roster, sheet, sign_in, staff

urlpatterns = [
    # roster.py: the ST list (search, filters) and a player's own list
    path("characters/", roster.character_list, name="character_list"),
    # people.py: the members of the chronicle with their characters (staff)
    path("people/", people.people, name="people"),
    path("npc-volunteers/", roster.npc_volunteers, name="npc_volunteers"),
    # creation.py: the creation wizard (CRE, CLN), live checks, submit, ST review (CRE-09)
    path("characters/new/", creation.character_create, name="character_create"),
    path("characters/<int:pk>/edit/", creation.character_edit, name="character_edit"),
    path("characters/<int:pk>/check/", creation.character_check, name="character_check"),
    path("characters/<int:pk>/submit/", creation.character_submit, name="character_submit"),
    path("characters/<int:pk>/delete/", creation.character_delete, name="character_delete"),
    path("characters/<int:pk>/review/", creation.character_review, name="character_review"),
    # sheet.py: the sheet, its print version, its PDF and the XP history
    path("characters/<int:pk>/", sheet.character_sheet, name="character_sheet"),
    path("characters/<int:pk>/print/", sheet.character_print, name="character_print"),
    path("characters/<int:pk>/sheet.pdf", sheet.character_sheet_pdf, name="character_sheet_pdf"),
    # sign_in.py: a game's sign-in sheet for the door, as a PDF (its page is the chronicle app's)
    path("games/<int:number>/sign-in.pdf", sign_in.game_sign_in_pdf, name="game_sign_in_pdf"),
    # purchases.py: XP purchases in play (XP-01) and the ST sign-off queue
    path("characters/<int:pk>/buy/", purchases.purchase_create, name="purchase_create"),
    path("characters/<int:pk>/buy/preview/", purchases.purchase_preview, name="purchase_preview"),
    path("purchases/", purchases.purchase_queue, name="purchase_queue"),
    path("purchases/<int:pk>/", purchases.purchase_decide, name="purchase_decide"),
    path("purchases/<int:pk>/withdraw/", purchases.purchase_withdraw, name="purchase_withdraw"),
    path(
        "characters/<int:pk>/diableries/<int:diablerie_id>/decline/",
        purchases.diablerie_step_decline,
        name="diablerie_step_decline",
    ),
    # staff.py: the storytellers' records on one character
    path("characters/<int:pk>/st/", staff.character_actions, name="character_actions"),
    path("characters/<int:pk>/st/<slug:action>/", staff.character_action, name="character_action"),
    # imports.py: Grapevine files imported by the storytellers (preview, choices, a worker)
    path("import/", imports.import_upload, name="import_upload"),
    path("import/<int:pk>/", imports.import_job, name="import_job"),
    path("import/<int:pk>/confirm/", imports.import_confirm, name="import_confirm"),
    path("import/<int:pk>/progress/", imports.import_progress, name="import_progress"),
    path("import/<int:pk>/resend/", imports.import_resend, name="import_resend"),
]
