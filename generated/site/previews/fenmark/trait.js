window.rulesdslPreviews("fenmark/trait.html", {});
