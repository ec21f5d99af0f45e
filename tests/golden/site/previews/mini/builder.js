window.rulesdslPreviews("mini/builder.html", {});
