window.rulesdslPreviews("witcher/index.html", {});
