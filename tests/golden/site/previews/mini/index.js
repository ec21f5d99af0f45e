window.rulesdslPreviews("mini/index.html", {});
