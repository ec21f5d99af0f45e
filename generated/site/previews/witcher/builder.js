window.rulesdslPreviews("witcher/builder.html", {});
