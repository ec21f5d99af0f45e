window.rulesdslPreviews("fenmark/lifepath.html", {});
