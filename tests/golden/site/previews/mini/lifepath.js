window.rulesdslPreviews("mini/lifepath.html", {});
