window.rulesdslPreviews("mini/kinds.html", {});
