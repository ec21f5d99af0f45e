window.rulesdslPreviews("witcher/kinds.html", {});
